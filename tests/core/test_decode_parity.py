"""Decoding against Hugging Face's ``generate`` and logits processors, on a tiny random GPT-2 with copied
weights: greedy and beam search pick the same ids; temperature, top-k and top-p filter to the same
distributions. Dev-only: transformers."""

import pytest
import torch
import transformers
from transformers.generation.logits_process import (LogitsProcessorList, TemperatureLogitsWarper,
                                                    TopKLogitsWarper, TopPLogitsWarper)

from core import Transformer, TransformerConfig
from core.decode import beam_search, filtered, greedy, temperature, top_k, top_p
from tests.support.hf_gpt2 import gpt2_from

# A tiny vocabulary makes an end token likely, so beams finish early and the finished-hypothesis rules matter.
GPT2_LIKE = TransformerConfig(N=2, M=4, E=16, nhead=4, layers=2, vocab_size=12, arch="decoder-only",
                              norm_first=True, activation="gelu", positional="learned", max_len=24,
                              tie_embeddings=True, seed=3)


def pair(seed: int, eos: int | None):
    cfg = GPT2_LIKE.replace(seed=seed)
    ours = Transformer.from_config(cfg).eval()
    return cfg, ours, gpt2_from(ours, cfg, eos)


def prompt(cfg, N: int, seed: int = 5) -> torch.Tensor:
    return torch.randint(0, cfg.vocab_size, (N, cfg.M), generator=torch.Generator().manual_seed(seed))  # (N, M)


def hf_rows(out: torch.Tensor, M: int, eos: int | None) -> list[list[int]]:
    """HF's new ids per row, cut after the first eos (it pads with eos after it)."""
    rows = []
    for row in out[:, M:].tolist():
        rows.append(row[:row.index(eos) + 1] if eos is not None and eos in row else row)
    return rows


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("eos", [None, 0])
def test_greedy_matches_generate(seed, eos):
    cfg, ours, hf = pair(seed, eos)
    ids = prompt(cfg, 2, seed)
    mine = greedy(ours, ids, 12, eos=eos)
    theirs = hf.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=12, do_sample=False,
                         eos_token_id=eos, pad_token_id=eos if eos is not None else 0)
    assert mine.generated == hf_rows(theirs, cfg.M, eos)


# num_beams=1 is greedy search in generate, which ignores length_penalty and early_stopping; our beam search at
# B = 1 equals it when it stops at its first finished hypothesis (early_stopping=True).
BEAM_CASES = [(B, lp, stop) for B in (2, 3, 5) for lp, stop in ((1.0, False), (0.0, True), (2.0, "never"),
                                                                (-1.0, False))] + [(1, 1.0, True)]


@pytest.mark.parametrize("B, length_penalty, early_stopping", BEAM_CASES)
@pytest.mark.parametrize("seed", range(2))
def test_beam_search_matches_generate(B, length_penalty, early_stopping, seed):
    eos = seed % 3  # an id the model may well pick, so hypotheses end at different lengths
    cfg, ours, hf = pair(seed, eos)
    ids = prompt(cfg, 1, seed)
    mine = beam_search(ours, ids, 10, B=B, length_penalty=length_penalty, early_stopping=early_stopping, eos=eos)
    theirs = hf.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=10, num_beams=B, do_sample=False,
                         length_penalty=length_penalty, early_stopping=early_stopping, eos_token_id=eos,
                         pad_token_id=eos)
    assert mine.generated[0] == theirs[0, cfg.M:cfg.M + len(mine.generated[0])].tolist()
    assert theirs.shape[1] == cfg.M + len(mine.generated[0])


@pytest.mark.parametrize("B", [2, 4])
def test_beam_search_matches_generate_over_a_batch(B):
    """Two prompts at once: each keeps its own beams, scores and finished hypotheses."""
    cfg, ours, hf = pair(7, 1)
    ids = prompt(cfg, 2, 9)
    mine = beam_search(ours, ids, 9, B=B, eos=1)
    theirs = hf.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=9, num_beams=B, do_sample=False,
                         eos_token_id=1, pad_token_id=1)
    for n in range(2):
        assert mine.generated[n] == theirs[n, cfg.M:cfg.M + len(mine.generated[n])].tolist()


def logits_rows(seed: int, N: int = 3, V: int = 50) -> torch.Tensor:
    return torch.randn(N, V, generator=torch.Generator().manual_seed(seed)) * 3  # (N, vocab_size)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("T", [0.3, 1.0, 2.5])
def test_temperature_matches_hf(seed, T):
    x = logits_rows(seed)
    torch.testing.assert_close(temperature(x, T).softmax(-1), TemperatureLogitsWarper(T)(None, x.clone()).softmax(-1))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("k", [1, 2, 7, 50, 80])
def test_top_k_matches_hf(seed, k):
    x = logits_rows(seed)
    torch.testing.assert_close(top_k(x, k).softmax(-1), TopKLogitsWarper(k)(None, x.clone()).softmax(-1))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("p", [0.05, 0.3, 0.5, 0.9, 0.99])
def test_top_p_matches_hf(seed, p):
    x = logits_rows(seed)
    torch.testing.assert_close(top_p(x, p).softmax(-1), TopPLogitsWarper(p)(None, x.clone()).softmax(-1))


@pytest.mark.parametrize("T, k, p", [(0.7, 10, 0.9), (1.5, 5, 0.5), (1.0, None, 0.8), (0.5, 3, 1.0)])
def test_the_filters_in_order_match_hfs_chain(T, k, p):
    x = logits_rows(11)
    chain = [TemperatureLogitsWarper(T)] + ([TopKLogitsWarper(k)] if k else []) + ([TopPLogitsWarper(p)] if p < 1 else [])
    theirs = LogitsProcessorList(chain)(None, x.clone()).softmax(-1)
    torch.testing.assert_close(filtered(x, T, k, p)["after top-p"], theirs)


def test_the_model_matches_hf_logits_so_the_parity_compares_decoding_alone():
    cfg, ours, hf = pair(0, None)
    ids = prompt(cfg, 2)
    from core.model import generate_square_subsequent_mask
    with torch.no_grad():
        torch.testing.assert_close(ours(None, ids, tgt_mask=generate_square_subsequent_mask(cfg.M)), hf(ids).logits,
                                   atol=1e-4, rtol=1e-4)
    assert transformers.__version__
