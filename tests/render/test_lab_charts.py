"""render.lab_charts' words for a run stopped after its first step: one step, held-out loss measured once."""

from __future__ import annotations

from render.lab_charts import loss_words


def test_a_run_of_one_step_and_one_measurement_counts_them_in_the_singular():
    words = loss_words([2.5], val=[(1, 2.4)])
    assert words.startswith("Line chart of the training loss (cross-entropy, nats per token) per training step, "
                            "1 step: 2.500 at step 1")
    assert "Held-out loss, measured once: lowest 2.400 at step 1" in words
    assert "1 steps" not in words and "1 times" not in words
    assert "measured 2 times" in loss_words([2.5, 2.4], val=[(1, 2.4), (2, 2.3)])
