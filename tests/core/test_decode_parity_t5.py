"""Decoding an encoder-decoder against Hugging Face's ``generate`` on a tiny random T5 with copied weights: greedy
and beam search pick the same ids from the decoder's start token (0, T5's pad), with an end token. Dev-only."""

import pytest
import torch

from core import Transformer
from core.config import TINY_T5
from core.decode import beam_search, greedy
from tests.support.hf_t5 import t5_from

CFG = TINY_T5.replace(N=2, M=6, M_target=1, vocab_size=12, seed=5)
START = 0  # T5's decoder_start_token_id is its pad id


def pair(seed: int, eos: int):
    cfg = CFG.replace(seed=seed)
    ours = Transformer.from_config(cfg).eval()
    hf = t5_from(ours, cfg, decoder_start_token_id=START, pad_token_id=START, eos_token_id=eos)
    src = torch.randint(1, cfg.vocab_size, (cfg.N, cfg.M), generator=torch.Generator().manual_seed(seed))  # (N, M)
    return cfg, ours, hf, src


def new_ids(out: torch.Tensor, eos: int) -> list[list[int]]:
    rows = []
    for row in out[:, 1:].tolist():  # HF's output starts with the start token
        rows.append(row[:row.index(eos) + 1] if eos in row else row)
    return rows


@pytest.mark.parametrize("seed", range(3))
def test_t5_greedy_matches_generate(seed):
    eos = 1 + seed
    cfg, ours, hf, src = pair(seed, eos)
    start = torch.full((cfg.N, 1), START)  # (N, 1)
    mine = greedy(ours, start, 8, eos=eos, src=src)
    theirs = hf.generate(src, attention_mask=torch.ones_like(src), max_new_tokens=8, do_sample=False)
    assert mine.generated == new_ids(theirs, eos)


@pytest.mark.parametrize("B, length_penalty, early_stopping", [(2, 1.0, False), (3, 0.0, True), (4, 2.0, "never")])
@pytest.mark.parametrize("seed", range(2))
def test_t5_beam_search_matches_generate(B, length_penalty, early_stopping, seed):
    eos = 1 + seed
    cfg, ours, hf, src = pair(seed, eos)
    src = src[:1]
    mine = beam_search(ours, torch.full((1, 1), START), 8, B=B, length_penalty=length_penalty,
                       early_stopping=early_stopping, eos=eos, src=src)
    theirs = hf.generate(src, attention_mask=torch.ones_like(src), max_new_tokens=8, num_beams=B, do_sample=False,
                         length_penalty=length_penalty, early_stopping=early_stopping)
    assert theirs[0, 1:].tolist() == mine.generated[0]
