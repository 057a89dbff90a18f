"""Decoding, live: beam search, greedy, sampling and MBR on a small decoder-only model with the learner's N and
vocab_size, each step's tensors read off core.decode's records."""

from __future__ import annotations

import torch

from core.config import TransformerConfig
from core.decode import beam_search, greedy, mbr, sample, teacher_forcing, top_p
from core.model import Transformer
from .base import Evidence, generator, in_family

BEAMS = 4  # B in the questions
STEPS = 3  # G new tokens in the beam search whose shapes are asked
TARGET = 5  # T target tokens teacher forcing reads
SAMPLES = 6  # S samples MBR compares

MAX_ROWS_TIMES_VOCAB = 2**18  # N * vocab_size of a live run; past it, both are capped and scaled back
COLD = 1e-5  # the temperature read as "near 0": a gap of 1e-4 between two logits becomes one of 10
P = 0.9

DECODING_LABELS = {
    "beams_shape": f"the beams after {STEPS} steps of beam search, B = {BEAMS} (N·B, M + {STEPS})",
    "candidates_shape": f"the candidates at each step (N, B·vocab_size), B = {BEAMS}",
    "cache_rows": "the KV cache's batch dimension during beam search",
    "forced_shape": f"teacher forcing's logits, {TARGET}-token target (N, M + T − 1, vocab_size)",
    "beam1_equals_greedy": "beam search at B = 1 picked the same ids as greedy",
    "cold_equals_greedy": f"sampling at temperature {COLD} picked the same ids as greedy",
    "kept_peaked": f"tokens top-p = {P} keeps from a peaked distribution (logits × 4)",
    "kept_flat": f"tokens top-p = {P} keeps from a flat one (logits ÷ 4)",
    "utility_shape": f"MBR's utility matrix for S = {SAMPLES} samples of one prompt",
    "chosen": "the sample MBR chose (0-based)",
}


def _small(cfg: TransformerConfig) -> tuple[TransformerConfig, str]:
    """The learner's family parts at a small width and depth, with their N and vocab_size when the logits stay small."""
    c = in_family(cfg, "decoder-only")
    N, V, note = c.N, c.vocab_size, ""
    if N * V > MAX_ROWS_TIMES_VOCAB:
        N, V = min(N, 2), min(V, 256)
        note = (f"Run at N={N} and vocab_size={V} to stay fast; the shapes at your N={c.N} and vocab_size="
                f"{c.vocab_size} scale from it: each prompt has its own B beams and B·vocab_size candidates.")
    M = min(c.M, 8)
    small = TransformerConfig(arch="decoder-only", N=N, M=M, E=16, nhead=2, layers=1, vocab_size=V,
                              positional="learned" if c.positional == "learned" else "sinusoidal",
                              max_len=M + STEPS + TARGET + 8, norm_first=c.norm_first, seed=c.seed)
    if M < c.M:
        note = " ".join(n for n in (note, f"The prompt is M={M} tokens here, not M={c.M}: the shapes grow from it.") if n)
    return small, note


@torch.no_grad()
def decoding(cfg: TransformerConfig) -> Evidence:
    """Beam search's beams, candidates and cache at B = 4; B = 1 and temperature near 0 against greedy; top-p's
    kept set on a peaked and a flat distribution; teacher forcing's one pass; MBR's matrix."""
    c = in_family(cfg, "decoder-only")
    small, note = _small(cfg)
    model = Transformer.from_config(small).train(False)
    prompt = torch.randint(0, small.vocab_size, (small.N, small.M), generator=generator(small.seed))  # (N, M)
    beam = beam_search(model, prompt, STEPS, B=BEAMS)
    first, last = beam.steps[0], beam.steps[-1]
    rows = last.get("beams").shape[0] // small.N  # beams per prompt: B
    beams_shape = (c.N * rows, c.M + STEPS)
    per_prompt = first.get("candidates").shape[1]  # B * vocab_size at the run's vocab_size
    candidates_shape = (c.N, per_prompt // small.vocab_size * c.vocab_size)
    cache_rows = first.get("kv_cache").shape[2] // small.N * c.N
    plain = greedy(model, prompt, 6)
    forced = teacher_forcing(model, prompt, torch.tensor(plain.generated)[:, :TARGET])
    logits_shape = forced.steps[0].get("logits").shape  # (N, M + T - 1, vocab_size)
    forced_shape = (c.N, c.M + logits_shape[1] - small.M, c.vocab_size)
    one = beam_search(model, prompt, 6, B=1)
    cold = sample(model, prompt, 6, temperature=COLD, seed=1)
    row = model(None, prompt[:1])[:, -1]  # (1, vocab_size): the first prompt's next-token logits
    kept = {name: int((top_p(row * scale, P) > float("-inf")).sum()) for name, scale in (("peaked", 4.0), ("flat", 0.25))}
    chosen = mbr(model, prompt[:1], 6, S=SAMPLES, seed=2)
    utility = chosen.extra("utility")
    values = {"beams_shape": beams_shape, "candidates_shape": candidates_shape, "cache_rows": cache_rows,
              "forced_shape": forced_shape, "beam1_equals_greedy": one.generated == plain.generated,
              "cold_equals_greedy": cold.generated == plain.generated, "kept_peaked": kept["peaked"],
              "kept_flat": kept["flat"], "utility_shape": tuple(utility.shape[1:]),
              "chosen": chosen.extra("chosen").values[0]}
    records = [{"distribution": f"{name} ({'logits × 4' if name == 'peaked' else 'logits ÷ 4'})",
                f"tokens kept at top-p {P}": n} for name, n in kept.items()]
    return Evidence("decoding", f"Decoding a small decoder-only model, B = {BEAMS} beams", values, records,
                    {"kind": "bar", "x": "distribution", "y": f"tokens kept at top-p {P}", "horizontal": "true"},
                    note, DECODING_LABELS)
