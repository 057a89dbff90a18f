"""A model trained in the lab, traced as the explorer traces any model: same numbers as the run's own model,
labelled by the task's symbols, and on the reversal task its attention forms the anti-diagonal."""

import json

import pytest
import torch

from core.model import build_causal_lm
from core.train import ReversalSettings, reversal_sequence, train_reversal, trained_reversal
from core.values import value_slice

FAST = ReversalSettings(M=8, vocab_size=8, E=32, nhead=2, layers=2, d_ff=64, N=32, steps=80, eval_sequences=256)


@pytest.fixture(scope="module")
def run():
    return train_reversal(FAST, keep_model=True)


def test_the_traced_model_computes_what_the_lab_model_computes():
    lm = build_causal_lm(seed=3, vocab_size=FAST.vocab_size + 1, E=FAST.E, nhead=FAST.nhead, layers=FAST.layers,
                         d_ff=FAST.d_ff, max_len=FAST.M, positional="learned")
    trained = trained_reversal(lm, FAST, "trained: a test")
    batch = reversal_sequence(FAST, x=[1, 2, 3, 4])
    t = trained.trace(batch)
    with torch.no_grad():
        expected = lm(torch.tensor([batch.source[0]]))  # (1, M, vocab_size)
    torch.testing.assert_close(t.value("logits"), expected)
    assert t.weights == "trained: a test"


def test_the_reversal_runs_attention_forms_the_anti_diagonal(run):
    t = run.trained.trace()
    half, M = FAST.M // 2, FAST.M
    # Guessing mirror token q (q >= half) means reading input position M - q, which holds the token it copies.
    hits = []
    for layer in range(FAST.layers):
        weights = t.tensors[f"dec.{layer}.self_attn.weights"][0].mean(0)  # (nhead, M, M) -> (M, M)
        hits.append(sum(int(weights[q].argmax()) == M - q for q in range(half, M)))
    assert max(hits) >= half - 1, hits
    assert run.second_half >= 0.9


def test_the_trained_trace_is_labelled_by_the_tasks_symbols_and_says_it_is_trained(run):
    t = run.trained.trace()
    assert t.weights.startswith("trained: the reversal task, 80 steps")
    _, rows, cols = value_slice(t, "attention_scores")
    assert rows[0] == "<start>" and rows[1:] == [str(i) for i in t.value("input_tokens")[0, 1:].tolist()]
    assert cols == rows
    data = run.to_dict()
    assert "trained" not in data
    json.dumps(data)
    assert train_reversal(ReversalSettings(M=4, vocab_size=4, E=8, nhead=2, layers=1, d_ff=8, N=4, steps=1,
                                           eval_sequences=4)).trained is None


def test_a_task_sequence_out_of_the_vocabulary_is_a_message():
    with pytest.raises(ValueError, match="x must be 4 symbols, each 0 to 7"):
        reversal_sequence(FAST, x=[1, 2, 9, 0])


def test_a_one_step_runs_weights_say_one_step():
    trained = train_reversal(ReversalSettings(M=4, vocab_size=4, E=8, nhead=2, layers=1, d_ff=8, N=4, steps=1,
                                              eval_sequences=4), keep_model=True).trained
    assert trained.weights.startswith("trained: the reversal task, 1 step, ")
