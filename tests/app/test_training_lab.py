"""The training lab page runs tiny trainings to the end and renders their plain results."""

from __future__ import annotations

import pytest

from tests.app.conftest import make_app

PAGE = "pages/training_lab.py"


@pytest.fixture
def lab():
    at = make_app()
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def small_model(at, prefix: str, steps: int) -> None:
    """Sizes that train in well under a second."""
    at.select_slider(key=f"{prefix}_E").set_value(16).run()
    at.select_slider(key=f"{prefix}_nhead").set_value(2)
    at.slider(key=f"{prefix}_layers").set_value(1)
    at.select_slider(key=f"{prefix}_d_ff").set_value(32)
    at.select_slider(key=f"{prefix}_N").set_value(8)
    at.slider(key=f"{prefix}_steps").set_value(steps)


def test_page_opens_with_both_experiments_and_no_result_yet(lab):
    assert [t.label for t in lab.tabs] == ["Reversal: does the mask work?", "A tiny language model"]
    assert lab.button(key="tl_rev_run") and lab.button(key="tl_lm_run")
    assert "tl_rev_latest" not in lab.session_state
    assert lab.select_slider(key="tl_rev_nhead").options == ["1", "2", "4", "8"]  # divisors of E=64, up to 8


def test_reversal_trains_to_the_end_then_compares_without_the_mask(lab):
    lab.slider(key="tl_rev_M").set_value(4)
    lab.slider(key="tl_rev_vocab").set_value(4)
    small_model(lab, "tl_rev", steps=10)
    lab.button(key="tl_rev_run").click().run()
    assert not lab.exception
    results = lab.session_state["tl_rev_results"]
    assert list(results) == ["with the causal mask"]
    res = results["with the causal mask"]
    assert res["steps_done"] == 10 and len(res["per_position_accuracy"]) == 4
    assert res["settings"]["E"] == 16 and res["settings"]["causal"] is True
    assert "tl_rev_live" not in lab.session_state  # a finished run leaves no progress behind
    assert [m.label for m in lab.metric][:3] == ["first half (x) accuracy", "second half (reverse(x)) accuracy",
                                                   "chance, 1/vocab_size"]
    assert lab.metric[2].value == "25.0%"
    assert not any("Why the model cheats" in m.value for m in lab.markdown)

    lab.toggle(key="tl_rev_nomask").set_value(True)
    lab.button(key="tl_rev_run").click().run()
    assert not lab.exception
    results = lab.session_state["tl_rev_results"]
    assert set(results) == {"with the causal mask", "without the mask"}  # same sizes: both kept for the chart
    assert results["without the mask"]["settings"]["causal"] is False
    assert any("Why the model cheats" in m.value for m in lab.markdown)

    lab.slider(key="tl_rev_steps").set_value(5)  # new sizes: the older run no longer compares
    lab.button(key="tl_rev_run").click().run()
    assert list(lab.session_state["tl_rev_results"]) == ["without the mask"]


def test_an_interrupted_run_shows_how_far_it_got(lab):
    lab.session_state["tl_rev_live"] = {"loss": [2.0, 1.5, 1.2], "steps": 300}
    lab.button(key="tl_rev_stop").click().run()
    assert not lab.exception
    assert any("Stopped after 3 of 300 steps" in i.value for i in lab.info)
    assert "tl_rev_live" not in lab.session_state


def test_language_model_trains_and_shows_samples(lab):
    lab.radio(key="tl_lm_tok").set_value("word")
    lab.select_slider(key="tl_lm_M").set_value(16)
    small_model(lab, "tl_lm", steps=5)
    lab.select_slider(key="tl_lm_len").set_value(20)
    lab.button(key="tl_lm_run").click().run()
    assert not lab.exception
    res = lab.session_state["tl_lm_result"]
    assert res["steps_done"] == 5 and res["settings"]["tokenizer"] == "word"
    samples = [c.value for c in lab.code if c.value.startswith("To be")]
    assert samples == res["samples"] and len(samples) == 2


def test_a_prompt_outside_the_text_is_refused_with_a_message(lab):
    lab.text_input(key="tl_lm_prompt").input("Zebra").run()
    assert not lab.exception
    assert any("The prompt must use only" in w.value for w in lab.warning)
    assert any("'Z'" in c.value and "not in the training text" in c.value for c in lab.code)


def test_a_failing_run_shows_an_error_and_the_page_survives(lab, monkeypatch):
    import core.train

    def broken(settings, **kwargs):
        raise RuntimeError("out of patience")

    monkeypatch.setattr(core.train, "train_reversal", broken)
    lab.button(key="tl_rev_run").click().run()
    assert not lab.exception
    assert any("Training failed: out of patience" in e.value for e in lab.error)
    assert "tl_rev_live" not in lab.session_state and "tl_rev_stopped" not in lab.session_state
    assert lab.button(key="tl_lm_run")  # the other tab still renders
