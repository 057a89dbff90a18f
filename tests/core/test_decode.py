"""core.decode: each strategy's recorded shapes, beam search's cache reordering against full passes, the
properties that tie the strategies together (hypothesis), MBR's utility, teacher forcing's single pass, the
shipped character LM and the CLI."""

import json
import subprocess
import sys

import pytest
import torch
from hypothesis import given, settings, strategies as st

from core import Transformer, TransformerConfig
from core.decode import (beam_search, filtered, greedy, mbr, sample, teacher_forcing, top_k, top_p, unigram_f1)
from core.decode.models import CONFIG_FILE, WEIGHTS_FILE, load_char_lm
from core.decode.run import decode
from core.model import generate_square_subsequent_mask

CFG = TransformerConfig(arch="decoder-only", N=2, M=4, E=16, nhead=2, layers=2, vocab_size=20, positional="learned",
                        max_len=32, norm_first=True, activation="gelu", seed=1)


def model_and_prompt(cfg=CFG, seed=0):
    model = Transformer.from_config(cfg).eval()
    prompt = torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M), generator=torch.Generator().manual_seed(seed))
    return model, prompt


def test_beam_search_records_the_issue_s_shapes():
    model, prompt = model_and_prompt()
    N, B, V, M = CFG.N, 3, CFG.vocab_size, CFG.M
    d = beam_search(model, prompt, 5, B=B)
    for i, step in enumerate(d.steps):
        assert step.get("candidates").shape == (N, B * V)
        assert step.get("top_2B_scores").shape == (N, 2 * B)
        assert step.get("beams").shape == (N * B, M + i + 1)
        assert step.get("beam_scores").shape == (N, B)
        assert step.get("reorder_index").shape == (N * B,)
        assert step.get("kv_cache").shape == (CFG.layers, 2, N * B, CFG.nhead_kv, M + i, CFG.d_k)
    assert [len(g) for g in d.generated] == [5, 5]
    assert d.extra("finished").shape == (N, B) and len(d.extra("finished").values[0]) == B


@torch.no_grad()
def test_the_reordered_cache_gives_each_beam_the_logits_of_a_full_pass_over_it():
    """If the cache were not reordered, a beam would attend to another beam's past: its logits would differ."""
    model, prompt = model_and_prompt()
    d = beam_search(model, prompt, 4, B=3)
    for before, after in zip(d.steps, d.steps[1:]):
        beams = torch.tensor(before.get("beams").values)  # (N*B, t)
        full = model(None, beams, tgt_mask=generate_square_subsequent_mask(beams.shape[1]))[:, -1]  # (N*B, vocab)
        torch.testing.assert_close(torch.tensor(after.get("logits").values), full, atol=1e-5, rtol=1e-5)


ids = st.integers(0, 10_000)


@settings(max_examples=15, deadline=None)
@given(seed=ids, G=st.integers(1, 8), lp=st.floats(-2, 3), stop=st.sampled_from([False, True, "never"]))
def test_beam_search_with_one_beam_is_greedy(seed, G, lp, stop):
    model, prompt = model_and_prompt(CFG.replace(seed=seed % 50), seed)
    assert beam_search(model, prompt, G, B=1, length_penalty=lp, early_stopping=stop).generated == \
        greedy(model, prompt, G).generated


@settings(max_examples=15, deadline=None)
@given(seed=ids, G=st.integers(1, 8), eos=st.integers(0, CFG.vocab_size - 1))
def test_one_beam_stopping_at_its_first_finished_hypothesis_is_greedy_with_an_end_token(seed, G, eos):
    model, prompt = model_and_prompt(CFG.replace(seed=seed % 50), seed)
    assert beam_search(model, prompt, G, B=1, early_stopping=True, eos=eos).generated == \
        greedy(model, prompt, G, eos=eos).generated


logit_rows = st.lists(st.floats(-30, 30, allow_nan=False), min_size=2, max_size=40)


@settings(max_examples=50, deadline=None)
@given(row=logit_rows)
def test_top_k_with_k_the_vocabulary_changes_nothing(row):
    x = torch.tensor([row])
    assert torch.equal(top_k(x, len(row)), x)


@settings(max_examples=50, deadline=None)
@given(row=logit_rows)
def test_top_p_with_p_one_changes_no_probability(row):
    x = torch.tensor([row])
    assert torch.equal(top_p(x, 1.0).softmax(-1), x.softmax(-1))


@settings(max_examples=50, deadline=None)
@given(row=logit_rows, p=st.floats(0.01, 1.0))
def test_top_p_keeps_the_most_likely_token_and_at_least_p(row, p):
    x = torch.tensor([row])
    kept = top_p(x, p) > float("-inf")
    assert float(x[kept].max()) == float(x.max())  # a most likely token (one of them, on a tie)
    assert float(x.softmax(-1)[kept].sum()) >= p - 1e-5


def test_sampling_is_reproduced_by_its_seed_and_records_each_filter():
    model, prompt = model_and_prompt()
    a = sample(model, prompt, 6, temperature=0.8, top_k=5, top_p=0.9, seed=7)
    assert a.generated == sample(model, prompt, 6, temperature=0.8, top_k=5, top_p=0.9, seed=7).generated
    step = a.steps[0]
    for name in ("probs", "after temperature", "after top-k", "after top-p"):
        assert step.get(name).shape == (CFG.N, CFG.vocab_size)
    assert all(sum(v > 0 for v in row) <= 5 for row in step.get("after top-k").values)


def test_a_tiny_temperature_samples_greedy_ids():
    model, prompt = model_and_prompt()
    assert sample(model, prompt, 6, temperature=1e-5, seed=3).generated == greedy(model, prompt, 6).generated


def test_unigram_f1():
    assert unigram_f1([1, 2, 3], [1, 2, 3]) == 1.0
    assert unigram_f1([1, 1, 2], [1, 2, 2]) == pytest.approx(2 * 2 / 6)
    assert unigram_f1([1], [2]) == 0.0 and unigram_f1([], []) == 1.0


def test_mbr_keeps_the_sample_with_the_highest_mean_utility():
    model, prompt = model_and_prompt()
    S = 5
    d = mbr(model, prompt, 6, S=S, seed=4)
    U = torch.tensor(d.extra("utility").values)  # (N, S, S)
    assert U.shape == (CFG.N, S, S) and torch.equal(U, U.transpose(1, 2))
    samples = d.extra("samples").values
    for n in range(CFG.N):
        mean = (U[n].sum(1) - 1) / (S - 1)
        best = d.extra("chosen").values[n]
        assert float(mean[best]) == float(mean.max())
        assert d.generated[n] == samples[n * S + best]


@torch.no_grad()
def test_teacher_forcing_is_one_pass_with_the_loop_s_logits():
    model, prompt = model_and_prompt()
    g = greedy(model, prompt, 5)
    forced = teacher_forcing(model, prompt, torch.tensor(g.generated))
    step, = forced.steps
    assert step.get("logits").shape == (CFG.N, CFG.M + 5 - 1, CFG.vocab_size)
    loop = torch.stack([torch.tensor(s.get("logits").values) for s in g.steps], dim=1)  # (N, G, vocab)
    torch.testing.assert_close(torch.tensor(step.get("logits").values)[:, CFG.M - 1:], loop, atol=1e-5, rtol=1e-5)
    assert forced.generated == g.generated  # greedy's own ids are its argmax at every position


def test_bad_values_name_the_knob():
    model, prompt = model_and_prompt()
    with pytest.raises(ValueError, match="beams=0"):
        beam_search(model, prompt, 3, B=0)
    with pytest.raises(ValueError, match="temperature=0"):
        sample(model, prompt, 3, temperature=0)
    with pytest.raises(ValueError, match="top_p=1.5"):
        sample(model, prompt, 3, top_p=1.5)
    with pytest.raises(ValueError, match="learned positions"):
        greedy(model, prompt, 40)
    enc_dec = Transformer.from_config(TransformerConfig())
    with pytest.raises(ValueError, match="give src exactly when"):
        greedy(enc_dec, prompt, 2)
    with pytest.raises(ValueError, match="no decoder"):
        greedy(Transformer.from_config(TransformerConfig(arch="encoder-only")), prompt, 2)


PAPER = TransformerConfig(N=2, M=5, M_target=1, E=16, nhead=2, layers=2, vocab_size=20, seed=4, max_len=16)


@torch.no_grad()
def test_an_encoder_decoder_decodes_from_its_source_with_the_same_logits_as_full_passes():
    """The encoder runs once; every beam's cached step gives the logits of a full pass over source and beam."""
    model = Transformer.from_config(PAPER).eval()
    src = torch.randint(1, PAPER.vocab_size, (2, 5), generator=torch.Generator().manual_seed(3))  # (N, M)
    start = torch.zeros(2, 1, dtype=torch.long)  # (N, 1): the decoder's start token
    B = 3
    d = beam_search(model, start, 4, B=B, src=src)
    for before, after in zip(d.steps, d.steps[1:]):
        beams = torch.tensor(before.get("beams").values)  # (N*B, t)
        full = model(src.repeat_interleave(B, dim=0), beams,
                     tgt_mask=generate_square_subsequent_mask(beams.shape[1]))[:, -1]  # (N*B, vocab_size)
        torch.testing.assert_close(torch.tensor(after.get("logits").values), full, atol=1e-5, rtol=1e-5)
    g = greedy(model, start, 4, src=src)
    assert beam_search(model, start, 4, B=1, src=src).generated == g.generated
    forced = teacher_forcing(model, start, torch.tensor(g.generated), src=src)
    assert forced.generated == g.generated
    assert len(mbr(model, start, 3, S=3, src=src).generated) == 2


def test_the_shipped_model_is_small_loads_weights_only_and_makes_strategies_differ():
    assert WEIGHTS_FILE.stat().st_size < 2 * 2**20
    info = json.loads(CONFIG_FILE.read_text())
    assert info["command"] == "python -m core.decode.train_default"
    dm = load_char_lm()
    state = torch.load(WEIGHTS_FILE, weights_only=True)
    assert set(state) == set(dm.model.state_dict())
    runs = {s: decode(dm, "To be, or not", s, 30).continuations[0] for s in ("greedy", "beam", "sample")}
    assert len(set(runs.values())) == 3, runs
    untrained = load_char_lm(trained=False)
    assert decode(untrained, "To be", "greedy", 10).continuations != decode(dm, "To be", "greedy", 10).continuations


def test_a_long_prompt_keeps_its_last_characters():
    dm = load_char_lm()
    run = decode(dm, "a" * 10_000 + "To be", "greedy", 10)
    assert run.prompt_cut == 10_005 - (dm.max_len - 10) and run.prompt_text.endswith("To be")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "core.decode", *args], capture_output=True, text=True, timeout=300)


def test_cli_json_gives_every_step_and_the_generated_ids():
    out = cli("--strategy", "beam", "--prompt", "Shall I", "--beams", "3", "--max-new-tokens", "4", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert len(doc["generated"]) == 1 and len(doc["generated"][0]) == 4
    first = {r["name"]: r for r in doc["steps"][0]["records"]}
    V = len(json.loads(CONFIG_FILE.read_text())["vocab"])
    assert first["candidates"]["shape"] == [1, 3 * V] and first["beams"]["shape"] == [3, 8]


@pytest.mark.parametrize("args, words", [
    (("--strategy", "beam", "--beams", "0"), "beams=0"),
    (("--strategy", "sample", "--top-p", "2"), "top_p=2.0"),
    (("--strategy", "sample", "--temperature", "-1"), "temperature=-1.0"),
    (("--max-new-tokens", "999"), "max_new_tokens=999"),
    (("--strategy", "nope"), "invalid choice"),
    (("--prompt", "<script>\u202e\x1b[31m"), "\\u202e"),
])
def test_cli_bad_values_exit_2_with_one_line(args, words):
    out = cli(*args)
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and words in out.stderr and "\x1b" not in out.stderr
