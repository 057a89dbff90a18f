"""core.train: the reversal task shows the causal mask working, the tokenizers round-trip, runs stop.

Every run here is tiny (a second or less on one thread): the point is the shape of the result,
not a good model.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from core.train import (LMSettings, Progress, ReversalSettings, CharTokenizer, WordTokenizer, chunk, load_text,
                        main, one_thread, reversal_batch, train_lm, train_reversal)

ROOT = Path(__file__).resolve().parents[2]

# Small enough for a second of training, big enough to learn the mirror half reliably.
FAST = ReversalSettings(M=8, vocab_size=8, E=32, nhead=2, layers=2, d_ff=64, N=32, steps=80, eval_sequences=256)
TINY_LM = LMSettings(M=16, E=16, nhead=2, layers=1, d_ff=32, N=8, steps=6, sample_tokens=12, samples=2)


@pytest.fixture(scope="module")
def masked():
    return train_reversal(FAST)


@pytest.fixture(scope="module")
def unmasked():
    return train_reversal(replace(FAST, causal=False))


def test_batch_is_bos_then_x_then_x_reversed():
    s = ReversalSettings(M=6, vocab_size=5)
    seqs = reversal_batch(s, 3, torch.Generator().manual_seed(0))
    assert seqs.shape == (3, 7)
    assert (seqs[:, 0] == s.bos).all()
    torch.testing.assert_close(seqs[:, 4:], seqs[:, 1:4].flip(1))
    assert int(seqs[:, 1:].max()) < s.vocab_size


def test_masked_model_learns_the_mirror_half_only(masked):
    assert len(masked.per_position_accuracy) == FAST.M
    assert masked.second_half >= 0.9
    # x is uniform random: nothing before it tells the model what comes, so it stays near 1/8.
    assert abs(masked.first_half - masked.chance) < 0.08
    assert masked.chance == 1 / 8
    assert masked.steps_done == FAST.steps == len(masked.loss)
    assert masked.stopped is None
    # The loss cannot go below the unpredictable half's share: (M/2 * ln 8) / M per token.
    assert masked.loss[-1] > 0.9 * torch.log(torch.tensor(8.0)).item() / 2


def test_without_the_mask_the_model_reads_the_answer(unmasked):
    assert unmasked.settings["causal"] is False
    assert unmasked.first_half >= 0.9
    assert unmasked.second_half >= 0.9


def test_attention_maps_show_the_mask_and_the_mirror(masked):
    half = FAST.M // 2
    assert len(masked.attention) == FAST.layers
    for block in masked.attention:
        assert len(block) == FAST.M and all(len(row) == FAST.M for row in block)
        for q, row in enumerate(block):
            assert sum(row[q + 1:]) == 0.0  # nothing to the right of the diagonal is visible
            assert sum(row) == pytest.approx(1.0, abs=1e-5)

    def looks_at(block, q):
        return max(range(FAST.M), key=lambda k: block[q][k])

    # Guessing mirror token r_j (position half + j) means looking back at input half - j, which
    # holds x at position half - 1 - j: the token being copied.
    assert any([looks_at(block, half + j) for j in range(half)] == [half - j for j in range(half)]
               for block in masked.attention)


def test_without_the_mask_the_random_half_looks_ahead(unmasked):
    half = FAST.M // 2
    ahead = [sum(sum(block[q][q + 1:]) for q in range(half)) / half for block in unmasked.attention]
    assert max(ahead) > 0.5  # most of the attention of the first half goes to inputs after it


def test_examples_are_plain_lists_of_the_true_sequence_and_the_guesses(masked):
    assert len(masked.examples) == 4
    for ex in masked.examples:
        seq, guess = ex["sequence"], ex["predicted"]
        assert isinstance(seq, list) and isinstance(seq[0], int) and len(seq) == len(guess) == FAST.M
        assert seq[FAST.M // 2:] == seq[:FAST.M // 2][::-1]
    json.dumps(masked.to_dict())  # plain values all the way down


def test_same_seed_same_run_other_seed_other_run():
    s = ReversalSettings(M=4, vocab_size=4, E=16, nhead=2, layers=1, d_ff=32, N=8, steps=8, eval_sequences=32)
    a, b = train_reversal(s), train_reversal(s)
    assert a.loss == b.loss and a.per_position_accuracy == b.per_position_accuracy and a.examples == b.examples
    c = train_reversal(replace(s, seed=1))
    assert c.loss != a.loss


def test_training_does_not_touch_the_global_random_state():
    s = ReversalSettings(M=4, vocab_size=4, E=16, nhead=2, layers=1, d_ff=32, N=8, steps=2, eval_sequences=8)
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    train_reversal(s)
    torch.testing.assert_close(torch.rand(3), expected)


def test_callback_returning_false_stops_the_run():
    seen: list[Progress] = []

    def on_progress(p: Progress):
        seen.append(p)
        return p.step < 3

    res = train_reversal(FAST, on_progress=on_progress)
    assert [p.step for p in seen] == [1, 2, 3]
    assert all(p.steps == FAST.steps for p in seen)
    assert res.steps_done == 3 and res.stopped == "stop requested"
    assert [p.loss for p in seen] == res.loss
    assert len(res.per_position_accuracy) == FAST.M  # measured on the model as it stands


def test_a_set_event_stops_before_any_step():
    stop = threading.Event()
    stop.set()
    res = train_reversal(FAST, stop=stop)
    assert res.steps_done == 0 and res.loss == [] and res.stopped == "stop requested"


def test_time_limit_stops_the_run():
    res = train_reversal(FAST, max_seconds=1e-9)
    assert res.steps_done == 1 and res.stopped.startswith("time limit")


def test_one_thread_while_training_then_restored():
    before = torch.get_num_threads()
    inside: list[int] = []
    train_reversal(FAST, on_progress=lambda p: inside.append(torch.get_num_threads()) or p.step < 2)
    assert inside == [1, 1]
    assert torch.get_num_threads() == before
    with one_thread():
        with one_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def count_in_a_new_thread() -> int:
    """The thread count a thread started now begins with."""
    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    thread.start()
    thread.join()
    return seen[0]


def test_overlapping_runs_in_two_threads_put_the_count_back():
    """Run A starts, run B starts (in a thread born during A), A ends, B ends: threads started
    afterwards get the count from before A, not the 1 that B's thread began with."""
    saved = torch.get_num_threads()
    torch.set_num_threads(2)  # so that 1 is a change to see
    try:
        before = count_in_a_new_thread()
        a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
        inside: list[int] = []

        def run_a():
            with one_thread():
                a_in.set()
                b_in.wait(10)
            a_out.set()

        def run_b():
            a_in.wait(10)
            with one_thread():
                inside.append(torch.get_num_threads())
                b_in.set()
                a_out.wait(10)

        threads = [threading.Thread(target=run_a), threading.Thread(target=run_b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert before == 2 and inside == [1]
        assert count_in_a_new_thread() == before
    finally:
        torch.set_num_threads(saved)


@pytest.mark.parametrize("changes, words", [
    ({"M": 7}, "M=7 must be even"),
    ({"nhead": 3}, "nhead=3 must divide E=64"),
    ({"vocab_size": 1}, "vocab_size=1 must be between 2"),
    ({"lr": 0.0}, "lr=0.0"),
    ({"steps": 0}, "steps=0"),
])
def test_bad_reversal_settings_name_the_value(changes, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        ReversalSettings(**changes)


# ---------------------------------------------------------------------------------------- text


def test_shipped_text_is_a_few_kb_of_ascii():
    text = load_text()
    assert 3_000 < len(text.encode()) < 20_000
    assert text.isascii()
    assert "To be, or not to be" in text


@pytest.mark.parametrize("kind", [CharTokenizer, WordTokenizer])
def test_tokenizers_round_trip_the_shipped_text(kind):
    text = load_text()
    tok = kind(text)
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert "".join(tok.split(text)) == text
    assert max(ids) == len(tok) - 1 and min(ids) == 0
    assert tok.vocab == sorted(tok.vocab)  # the same ids in every process


def test_word_tokenizer_splits_at_word_boundaries():
    tok = WordTokenizer("To be, or not to be")
    assert tok.split("To be, or not") == ["To", " ", "be", ", ", "or", " ", "not"]
    assert len(WordTokenizer(load_text())) < len(WordTokenizer(load_text()).split(load_text()))


def test_unknown_tokens_are_named():
    with pytest.raises(ValueError, match="'Z'"):
        CharTokenizer("abc").encode("aZ")
    with pytest.raises(ValueError, match="'dog'"):
        WordTokenizer("the cat").encode("the dog")


def test_chunks_do_not_overlap():
    assert chunk(list(range(10)), 3) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    ids = CharTokenizer(load_text()).encode(load_text())
    pieces = chunk(ids, 64)
    assert all(len(p) == 65 for p in pieces)
    assert sum(pieces, []) == ids[:65 * len(pieces)]  # each token used at most once


def test_tiny_language_model_run():
    res = train_lm(TINY_LM)
    assert res.steps_done == 6 and len(res.loss) == 6 and res.stopped is None
    assert res.vocab_size == len(CharTokenizer(load_text()))
    assert res.train_sequences + res.val_sequences == len(load_text()) // 17
    assert res.val_sequences == int(0.1 * (len(load_text()) // 17))
    assert [step for step, _ in res.val_loss] == [1, 2, 3, 4, 5, 6]  # every steps // 10 steps, at least 1
    assert all(loss > 0 for _, loss in res.val_loss)
    assert len(res.samples) == 2
    for sample in res.samples:
        assert sample.startswith("To be") and len(sample) == len("To be") + 12
    assert res.uniform_loss == pytest.approx(torch.log(torch.tensor(float(res.vocab_size))).item())


def test_language_model_is_deterministic_and_word_level_works():
    word = replace(TINY_LM, tokenizer="word", M=8)
    a, b = train_lm(word), train_lm(word)
    assert a.loss == b.loss and a.samples == b.samples and a.val_loss == b.val_loss
    assert a.vocab_size == len(WordTokenizer(load_text()))
    assert all(s.startswith("To be") for s in a.samples)


def test_an_empty_prompt_starts_where_the_text_starts():
    res = train_lm(replace(TINY_LM, prompt="", samples=1))
    assert len(res.samples) == 1 and res.samples[0].startswith(load_text()[0])
    assert len(res.samples[0]) == 1 + TINY_LM.sample_tokens


def test_language_model_rejects_a_prompt_outside_the_vocabulary():
    with pytest.raises(ValueError, match="^2 char tokens not in the training text's vocabulary: 'Z', 'é'$"):
        train_lm(replace(TINY_LM, prompt="Zebra \u00e9"))
    with pytest.raises(ValueError, match="^1 char token not in the training text's vocabulary: 'é'$"):
        train_lm(replace(TINY_LM, prompt="ebra \u00e9"))


# ---------------------------------------------------------------------------------------- CLI


def test_cli_json_has_the_promised_keys(capsys):
    assert main(["--task", "reverse", "--seed", "0", "--json", "--steps", "3", "--M", "4", "--E", "16",
                 "--nhead", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"per_position_accuracy", "first_half", "second_half", "loss", "seconds"} <= set(out)
    assert len(out["per_position_accuracy"]) == 4 and len(out["loss"]) == 3


def test_cli_summary_for_the_language_model(capsys):
    assert main(["--task", "lm", "--steps", "2", "--M", "8", "--E", "16", "--nhead", "2", "--tokenizer", "word"]) == 0
    out = capsys.readouterr().out
    assert "word tokens" in out and "--- sample 1 ---" in out


@pytest.mark.parametrize("argv, words", [
    (["--M", "7"], "M=7 must be even"),
    (["--E", "10", "--nhead", "4"], "nhead=4 must divide E=10"),
    (["--task", "lm", "--no-mask"], "belong to --task reverse"),
    (["--task", "reverse", "--tokenizer", "word"], "belong to --task lm"),
    (["--task", "lm", "--prompt", "\u00e9"], "not in the training text"),
    # Reached numpy as "expected non-negative integer" and torch as "Overflow when unpacking long long".
    (["--seed", "-5"], "seed=-5 must be between 0 and 2147483647"),
    (["--task", "lm", "--seed", str(2**64)], f"seed={2**64} must be between 0 and 2147483647"),
])
def test_cli_bad_values_exit_2_with_one_line(capsys, argv, words):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and words in captured.err


def test_argparse_errors_exit_2_with_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--task", "sort"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--task" in err


def test_cli_module_entry():
    run = subprocess.run([sys.executable, "-m", "core.train", "--task", "reverse", "--steps", "2", "--M", "4",
                          "--E", "16", "--nhead", "2", "--json"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert len(json.loads(run.stdout)["loss"]) == 2
