"""T5's parts: its relative position bias (how many parameters, which pairs share a bucket), its shared embedding,
and why it can leave out 1/sqrt(d_k)."""

from __future__ import annotations

import math

import torch

from core.config import TransformerConfig
from core.model import RelativePositionBias, Transformer
from .base import Evidence, bounded, generator

MAX_BUCKET_SIDE = 64  # positions a side of the bucket table that is drawn and checked for diagonals
MAX_OFFSET_LENGTH = 2**16  # M up to which every offset's bucket is read; beyond, the note says so

RELATIVE_PROBE_LABELS = {
    "relative_parameters": "parameters the relative position tables add (against no positions)",
    "tables": "relative position tables: one per stack",
    "shared_saving": "parameters saved by one shared embedding matrix, not one per use",
    "diagonals_shared": "every pair on one diagonal (the same offset j − i) in the same bucket",
    "diagonals_merged": "some different offsets j − i in one bucket",
    "buckets_used": "different buckets the first stack's (M, M) table uses",
    "merged_from": "smallest |j − i| sharing its bucket with another distance (0: none)",
    "folded_difference": "largest logit difference: 1/sqrt(d_k) on the scores, against in W_q",
    "unscaled_difference": "largest logit difference: 1/sqrt(d_k) on the scores, against neither",
}


def _counts(cfg: TransformerConfig) -> int:
    return sum(p.numel() for p in Transformer.from_config(cfg, device="meta").parameters())


def _logits(cfg: TransformerConfig, fold: bool = False) -> torch.Tensor:
    """The model's logits on a seeded batch; ``fold`` divides every W_q by sqrt(d_k) first."""
    model = Transformer.from_config(cfg).train(False)
    gen = generator(cfg.seed)
    src = torch.randint(0, cfg.vocab_size, (1, cfg.M), generator=gen)  # (1, M)
    with torch.no_grad():
        if fold:
            for layer in [*(model.encoder or []), *(model.decoder or [])]:
                for attn in (layer.self_attn, getattr(layer, "cross_attn", None)):
                    if attn is not None:
                        attn.W_q.weight.div_(math.sqrt(attn.d_k))
                        if attn.W_q.bias is not None:
                            attn.W_q.bias.div_(math.sqrt(attn.d_k))
        if cfg.arch == "decoder-only":
            return model(None, src)  # (1, M, vocab_size)
        return model(src, src if cfg.arch == "encoder-decoder" else None)  # (1, M, vocab_size)


def relative_probe(cfg: TransformerConfig) -> Evidence:
    """The relative tables' and the shared embedding's counts on the model itself (on the meta device); the first
    stack's buckets from the model's own RelativePositionBias at the learner's M; and a small model run with
    1/sqrt(d_k) on its scores, against the same without it but with W_q divided by sqrt(d_k)."""
    rel = cfg if cfg.positional == "relative" else cfg.replace(positional="relative")
    total = _counts(rel)
    tables = 2 if rel.arch == "encoder-decoder" else 1
    tied, untied = (_counts(rel.replace(tie_embeddings=t)) for t in (True, False))

    # Every offset j − i of an (M, M) table is in its first row (j − 0) or first column (0 − i).
    bidirectional = rel.arch != "decoder-only"
    L = min(rel.M, MAX_OFFSET_LENGTH)
    table = RelativePositionBias(rel.nhead, rel.relative_buckets, rel.relative_max_distance, bidirectional,
                                 device="meta")  # only its buckets are read, never its weights
    rec: dict[str, torch.Tensor] = {}
    table(1, L, 0, "cpu", rec)
    row = rec["relative_buckets"][0]  # (L,): offsets 0 .. L - 1
    table(L, 1, 0, "cpu", rec)
    column = rec["relative_buckets"][:, 0]  # (L,): offsets 0 .. -(L - 1)
    side = min(L, MAX_BUCKET_SIDE)
    table(side, side, 0, "cpu", rec)
    square = rec["relative_buckets"]  # (side, side)
    offsets = torch.arange(side)[None, :] - torch.arange(side)[:, None]  # (side, side)
    diagonals = all(len(square[offsets == d].unique()) == 1 for d in range(-(side - 1), side))
    # A causal table's later keys (masked) all fall in bucket 0 with offset 0: only offsets at or before count.
    by_offset = {**{-d: int(b) for d, b in enumerate(column.tolist())},
                 **({d: int(b) for d, b in enumerate(row.tolist())} if bidirectional else {})}
    holders: dict[int, list[int]] = {}
    for d, b in by_offset.items():
        holders.setdefault(b, []).append(d)
    merged = [min(abs(d) for d in ds) for ds in holders.values() if len(ds) > 1]

    small, capped = bounded(rel, uses=("M", "E", "nhead", "d_ff", "layers", "vocab_size"))
    note = f"The scaling compared on a small model: {capped[0].lower()}{capped[1:]}" if capped else ""
    base = _logits(small.replace(scale_scores=True))
    folded = _logits(small.replace(scale_scores=False), fold=True)
    unscaled = _logits(small.replace(scale_scores=False))
    if L < rel.M:
        note = " ".join(n for n in (note, f"Buckets read for the first {L:,} positions of M = {rel.M:,}.") if n)
    records = [{"query i": i, "key j": j, "bucket": int(square[i, j])} for i in range(side) for j in range(side)]
    values = {
        "relative_parameters": total - _counts(rel.replace(positional="none")), "tables": tables,
        "shared_saving": untied - tied, "diagonals_shared": diagonals, "diagonals_merged": bool(merged),
        "buckets_used": len(set(by_offset.values())), "merged_from": min(merged) if merged else 0,
        "folded_difference": float((base - folded).abs().max()),
        "unscaled_difference": float((base - unscaled).abs().max()),
    }
    return Evidence("relative_probe", "T5's relative buckets, its shared embedding, and its unscaled scores",
                    values, records, {"kind": "heatmap", "x": "key j", "y": "query i", "color": "bucket"}, note,
                    RELATIVE_PROBE_LABELS)
