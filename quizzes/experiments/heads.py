"""Shared K/V heads and the KV cache: which query heads read one K/V head, what the cache holds at the
learner's sizes for MHA, GQA and MQA, and that a cached generation gives the same logits as a full pass."""

from __future__ import annotations

import math

import torch

from core.config import LLAMA2_70B, TransformerConfig
from core.kv_cache import generate
from core.memory import FP16_BYTES
from core.model import MultiHeadAttention, Transformer, generate_square_subsequent_mask
from core.weights import seeded
from .base import Evidence, bounded, generator, in_family

KV_POSITIONS = 4  # positions in the sharing probe: a softmax over one key would never move
LLAMA_CONTEXT = 4096  # tokens: Llama-2's context length


def _layout(nhead: int, nhead_kv: int) -> str:
    return "MHA" if nhead_kv == nhead else ("MQA" if nhead_kv == 1 else "GQA")


KV_SHARING_LABELS = {
    "nhead": "nhead — query heads",
    "nhead_kv": "nhead_kv — K/V heads",
    "layout": "MHA, GQA or MQA",
    "query_heads_moved": "query heads whose weights moved when K/V head 0 changed",
    "group": "query heads that read K/V head 0",
    "k_shape": "K as the probe recorded it, (N, nhead_kv, M, d_k)",
    "mqa_group": "query heads that read K/V head 0 with nhead_kv = 1",
}


def _readers(nhead: int, nhead_kv: int, seed: int) -> tuple[list[int], tuple[int, ...]]:
    """The query heads whose attention weights move when K/V head 0's W^K changes, and K's recorded shape.

    Narrow heads (d_k of 2, or 1 past 128 heads) keep even 1024 heads cheap; which head reads which
    does not depend on the width."""
    d_k = 2 if nhead <= 128 else 1
    E = nhead * d_k
    mha = seeded(MultiHeadAttention, E, nhead, nhead_kv=nhead_kv, seed=seed)
    x = torch.randn(1, KV_POSITIONS, E, generator=generator(seed))  # (1, KV_POSITIONS, E)
    before, after = {}, {}
    with torch.no_grad():
        mha(x, x, rec=before)
        mha.W_k.weight[:d_k] += torch.randn(d_k, E, generator=generator(seed + 1))  # K/V head 0's rows
        mha(x, x, rec=after)
    moved = (before["weights"] - after["weights"]).abs().amax(dim=(0, 2, 3)) > 0  # (nhead,)
    return [h for h, m in enumerate(moved.tolist()) if m], tuple(before["k"].shape)


def kv_sharing(cfg: TransformerConfig) -> Evidence:
    """Change K/V head 0's W^K and see which query heads' attention weights move: those that read it. At
    the learner's nhead and nhead_kv, and at nhead_kv = 1 (multi-query attention) for comparison."""
    heads, k_shape = _readers(cfg.nhead, cfg.nhead_kv, cfg.seed)
    mqa, _ = _readers(cfg.nhead, 1, cfg.seed)
    values = {"nhead": cfg.nhead, "nhead_kv": cfg.nhead_kv, "layout": _layout(cfg.nhead, cfg.nhead_kv),
              "query_heads_moved": heads, "group": len(heads), "k_shape": k_shape, "mqa_group": len(mqa)}
    records = [{"query head": h, "reads K/V head 0": "yes" if h in heads else "no", "weights moved": int(h in heads)}
               for h in range(min(cfg.nhead, 64))]
    note = (f"Run with narrow heads (d_k={k_shape[-1]}); which query head reads which K/V head does not depend on "
            "the width.")
    if cfg.nhead > 64:
        note += " The chart draws the first 64 query heads."
    return Evidence("kv_sharing", "Query heads that move when K/V head 0 changes", values, records,
                    {"kind": "bar", "x": "query head", "y": "weights moved", "color": "reads K/V head 0"}, note,
                    KV_SHARING_LABELS)


def _cache_shape(E: int, nhead: int, nhead_kv: int, N: int, M: int) -> tuple[int, ...]:
    """One layer's cached K after M tokens (V has the same shape), read off a meta attention block's own cache."""
    mha = MultiHeadAttention(E, nhead, "meta", nhead_kv=nhead_kv)
    cache: dict[str, torch.Tensor] = {}
    x = torch.empty(N, M, E, device="meta")  # (N, M, E)
    mha(x, x, cache=cache)  # fills cache['k'] and cache['v'], each (N, nhead_kv, M, d_k)
    return tuple(cache["k"].shape)


def _fp16_bytes(layers: int, shape: tuple[int, ...]) -> int:
    """K and V of every layer, two bytes a number."""
    return 2 * layers * math.prod(shape) * FP16_BYTES


KV_CACHE_LABELS = {
    "cache_shape": "one layer's K (and V), (N, nhead_kv, M, d_k), after M tokens",
    "cache_bytes_fp16": "the whole cache after M tokens, fp16 bytes",
    "mha_bytes_fp16": "the same with nhead_kv = nhead (MHA), fp16 bytes",
    "mqa_bytes_fp16": "the same with nhead_kv = 1 (MQA), fp16 bytes",
    "saved_bytes_fp16": "bytes your nhead_kv saves against MHA, fp16",
    "times_smaller": "MHA's cache ÷ yours",
    "llama_mib": "Llama-2-70B, 4,096 tokens, one sequence, fp16: MiB",
    "llama_mha_mib": "the same with 64 K/V heads (MHA): MiB",
    "steps": "tokens generated in the check",
    "max_difference": "largest |cached − full pass| of a logit",
    "agree": "cached and full-pass logits agree (within 1e-5)",
}


def kv_cache(cfg: TransformerConfig) -> Evidence:
    """The cache a decoder-only model of the learner's sizes keeps after its M-token prompt, for its
    nhead_kv, for MHA and for MQA, read off meta attention blocks; Llama-2-70B's at a 4,096-token context;
    and a real generation at capped sizes whose cached logits are compared with a full pass at every step.
    An encoder-decoder or encoder-only config is read as the decoder-only model of the same sizes."""
    c = in_family(cfg, "decoder-only")
    shapes = {kv: _cache_shape(c.E, c.nhead, kv, c.N, c.M) for kv in {c.nhead_kv, c.nhead, 1}}
    fp16 = {kv: _fp16_bytes(c.layers, shape) for kv, shape in shapes.items()}
    llama = LLAMA2_70B
    llama_mib = {kv: _fp16_bytes(llama.layers, _cache_shape(llama.E, llama.nhead, kv, 1, LLAMA_CONTEXT)) / 2**20
                 for kv in (llama.nhead_kv, llama.nhead)}
    small, note = bounded(c, uses=("M", "E", "nhead", "d_ff", "layers", "vocab_size", "N"))
    G = 4
    small = small.replace(max_len=small.M + G)  # a learned table needs a row for every generated token
    model = Transformer.from_config(small)
    run = generate(small, G, model)
    worst = 0.0
    with torch.no_grad():
        for t, cached in enumerate(run.step_logits):
            seen = run.tokens[:, :small.M + t]  # (N, M + t): the prompt and the tokens chosen so far
            full = model(None, seen, tgt_mask=generate_square_subsequent_mask(seen.shape[1]))[:, -1]  # (N, vocab)
            worst = max(worst, (full - cached).abs().max().item())
    mine = c.nhead_kv
    values = {"cache_shape": shapes[mine], "cache_bytes_fp16": fp16[mine], "mha_bytes_fp16": fp16[c.nhead],
              "mqa_bytes_fp16": fp16[1], "saved_bytes_fp16": fp16[c.nhead] - fp16[mine],
              "times_smaller": fp16[c.nhead] / fp16[mine], "llama_mib": llama_mib[llama.nhead_kv],
              "llama_mha_mib": llama_mib[llama.nhead], "steps": G, "max_difference": worst, "agree": worst <= 1e-5}
    records = [{"attention": f"{_layout(c.nhead, kv)} (nhead_kv={kv})" + (", yours" if kv == mine else ""),
                "cache bytes, fp16": fp16[kv]} for kv in sorted(fp16, reverse=True)]
    if cfg.arch != "decoder-only":
        note = " ".join(n for n in ("Read as the decoder-only model of your sizes.", note) if n)
    return Evidence("kv_cache", f"The KV cache after M={c.M} tokens, and a cached generation checked", values,
                    records, {"kind": "bar", "x": "attention", "y": "cache bytes, fp16", "horizontal": "true"},
                    note, KV_CACHE_LABELS)
