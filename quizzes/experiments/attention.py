"""Attention itself: why scores are divided by sqrt(d_k), which head counts a width allows, and which
axis the softmax normalises (the d_k and Q, K, V questions)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from core.config import TransformerConfig
from core.model import MultiHeadAttention, generate_square_subsequent_mask
from core.weights import seeded
from .base import MAX_HEAD_TRIES, MAX_SCORE_WIDTH, SIZE_LABELS, Evidence, bounded, generator

SCALE_WIDTHS = ("d_k", "E", "M")  # what attention could divide q.k by: a head's width, the model's, the length

# Keys per softmax in the entropy probe, whatever M is: over one key every entropy is 0, scaled or not.
ENTROPY_KEYS = 16


def model_scale_width(cfg: TransformerConfig) -> tuple[str, str]:
    """Which width the model's own attention divides q.k by, and the sizes it was asked at.

    One MultiHeadAttention at the bounded config's E and nhead, with at least two heads (with one,
    d_k equals E and the answers coincide), and a length that equals neither. Its recorded scores
    are compared with q.k / sqrt(w) for each width w, on its own recorded q and k.
    """
    small, _ = bounded(cfg)
    E, nhead = (small.E, small.nhead) if small.nhead > 1 else (16, 4)
    L = next(n for n in (3, 5, 7) if n not in (E // nhead, E))
    mha = seeded(MultiHeadAttention, E, nhead, seed=cfg.seed)
    x = torch.randn(1, L, E, generator=generator(cfg.seed))  # (1, L, E)
    rec: dict[str, Tensor] = {}
    with torch.no_grad():
        mha(x, x, rec=rec)
    dots = rec["q"] @ rec["k"].transpose(-2, -1)  # (1, nhead, L, d_k) @ (1, nhead, d_k, L) -> (1, nhead, L, L)
    for name, width in zip(SCALE_WIDTHS, (E // nhead, E, L)):
        if torch.allclose(rec["scores"], dots / math.sqrt(width), rtol=1e-4, atol=1e-5):
            return name, f"E={E}, nhead={nhead}, M={L}"
    return "none of them", f"E={E}, nhead={nhead}, M={L}"


SCORE_SCALING_LABELS = {
    "d_k": SIZE_LABELS["d_k"],
    "keys": f"keys per softmax: {ENTROPY_KEYS}, whatever M is",
    "variance_unscaled": "variance of q·k at the width measured",
    "measured_at_d_k": "width measured: your d_k (at most 1024)",
    "variance_unscaled_at_d_k": "variance of q·k at your d_k",
    "variance_scaled": "variance of q·k / sqrt(d_k) at the width measured",
    "entropy_unscaled": "softmax entropy of q·k, mean over queries",
    "entropy_scaled": "softmax entropy of q·k / sqrt(d_k), mean over queries",
    "max_entropy": "highest entropy possible, log(keys): every weight equal",
    "widths": "widths d_k drawn in the chart",
    "model_divides_by": "our attention divides q·k by the square root of",
    "model_asked_at": "sizes our attention was checked at",
}


def score_scaling(cfg: TransformerConfig) -> Evidence:
    """Variance of q.k grows with d_k; dividing by sqrt(d_k) keeps it near 1 and the softmax soft.

    q and k have unit-variance entries, as after a LayerNorm and a well-scaled projection. The
    entropy is the mean over queries of the softmax over S = ENTROPY_KEYS keys; its maximum is
    log(S). Also asks the model's own attention which width it divides by (``model_scale_width``).
    """
    d_k = cfg.d_k
    S = ENTROPY_KEYS
    gen = generator(cfg.seed)
    widths = sorted({1, 4, 16, 64, 256, min(d_k, MAX_SCORE_WIDTH)})
    records, at = [], {}
    with torch.no_grad():
        for w in widths:
            samples = min(4096, 2**22 // w)  # at most 4 Mi numbers per tensor
            q = torch.randn(samples, w, generator=gen)  # (samples, w)
            k = torch.randn(samples, w, generator=gen)  # (samples, w)
            dots = (q * k).sum(-1)  # (samples,)
            qs = torch.randn(64, w, generator=gen)  # (64 queries, w)
            ks = torch.randn(S, w, generator=gen)  # (S keys, w)
            raw = qs.double() @ ks.double().T  # (64, S), in float64 so that only a real change moves the entropy
            ent = {}
            for label, scores in (("unscaled", raw), ("scaled", raw / math.sqrt(w))):
                p = torch.softmax(scores, dim=-1)  # (64, S)
                ent[label] = -(p * p.clamp_min(1e-300).log()).sum(-1).mean().item()
            var_raw, var_scaled = dots.var().item(), (dots / math.sqrt(w)).var().item()
            at[w] = (var_raw, var_scaled, ent["unscaled"], ent["scaled"])
            records += [{"d_k": w, "scores": "q·k", "variance": var_raw, "softmax entropy": ent["unscaled"]},
                        {"d_k": w, "scores": "q·k / sqrt(d_k)", "variance": var_scaled,
                         "softmax entropy": ent["scaled"]}]
    var_raw, var_scaled, ent_raw, ent_scaled = at[min(d_k, MAX_SCORE_WIDTH)]
    note = ("" if d_k <= MAX_SCORE_WIDTH
            else f"Measured at d_k={MAX_SCORE_WIDTH} (capped); the variance keeps growing like d_k.")
    measured = min(d_k, MAX_SCORE_WIDTH)
    values = {"d_k": d_k, "keys": S, "variance_unscaled": var_raw, "measured_at_d_k": measured,
              # Past the cap, the variance per dimension measured at the cap, times d_k.
              "variance_unscaled_at_d_k": var_raw * d_k / measured, "variance_scaled": var_scaled,
              "entropy_unscaled": ent_raw, "entropy_scaled": ent_scaled, "max_entropy": math.log(S),
              "widths": widths}
    values["model_divides_by"], values["model_asked_at"] = model_scale_width(cfg)
    # The chart draws the variance only; the entropies are in its tooltips and the table of values.
    return Evidence("score_scaling", "Variance of q·k against d_k, unscaled and divided by sqrt(d_k)", values, records,
                    {"kind": "line", "x": "d_k", "y": "variance", "color": "scores", "log_y": "true"}, note,
                    SCORE_SCALING_LABELS)


HEAD_OPTIONS_LABELS = {
    "E": SIZE_LABELS["E"],
    "allowed": "nhead values that build an attention block",
    "count": "how many nhead values E allows",
    "smallest_refused": "smallest nhead that E refuses",
    "param_counts": "attention parameter counts seen, over every allowed nhead",
    "same_for_all": "attention has one parameter count for every allowed nhead",
    "d_k": SIZE_LABELS["d_k"],
}


def head_options(cfg: TransformerConfig) -> Evidence:
    """Try to build MultiHeadAttention(E, nhead) for every nhead, on the meta device.

    The ones that build are the divisors of E; their parameter count is the same for all of them.
    """
    E = cfg.E
    ok, counts = [], {}
    for h in range(1, min(E, MAX_HEAD_TRIES) + 1):
        try:
            mha = MultiHeadAttention(E, h, device="meta")
        except ValueError:
            continue
        ok.append(h)
        counts[h] = sum(p.numel() for p in mha.parameters())
    bad = next(h for h in range(2, E + 3) if E % h)
    records = [{"nhead": h, "d_k": E // h, "attention parameters": counts[h]} for h in ok]
    values = {"E": E, "allowed": ok, "count": len(ok), "smallest_refused": bad,
              "param_counts": sorted(set(counts.values())), "same_for_all": len(set(counts.values())) == 1,
              "d_k": cfg.d_k}
    note = f"Only nhead up to {MAX_HEAD_TRIES} tried." if E > MAX_HEAD_TRIES else ""
    if len(ok) == 1:
        note = (f"E={E} allows only nhead={ok[0]}, so there is no other nhead to compare here; at any E the count is "
                "4(E² + E) whatever nhead is.")
    return Evidence("head_options", "Which nhead values E allows, and attention's size for each", values, records,
                    {"kind": "bar", "x": "nhead", "y": "attention parameters"}, note, HEAD_OPTIONS_LABELS)


SOFTMAX_AXIS_LABELS = {
    "row_sums_all_one": "each row (a query, over the keys) sums to 1",
    "column_sums_all_one": "each column (a key, over the queries) sums to 1",
    "zero_above_diagonal": "every weight above the diagonal is 0 (masked)",
    "first_row": "first row: query 0's weights over the keys",
}


def softmax_axis(cfg: TransformerConfig) -> Evidence:
    """Which axis of the attention weights sums to 1: the keys (last axis), one row per query.

    The probe is the decoder's masked self-attention, so it runs over the target's M_target positions (a
    decoder-only model's M).
    """
    small, note = bounded(cfg, uses=("M_target", "E", "nhead"), layer_norm=False)  # attention alone
    mha = seeded(MultiHeadAttention, small.E, small.nhead, seed=small.seed)
    L = small.M_target or small.M  # a decoder-only model's one sequence
    x = torch.randn(1, L, small.E, generator=generator(small.seed))  # (1, M_target, E)
    rec: dict[str, Tensor] = {}
    with torch.no_grad():
        mha(x, x, generate_square_subsequent_mask(L), rec=rec)
    w = rec["weights"][0, 0]  # (M_target, M_target): head 0, query rows, key columns
    rows, cols = w.sum(-1), w.sum(-2)  # (M_target,), (M_target,)
    if L == 1:
        note = " ".join(n for n in (note, "With M_target=1 the weights are one 1 × 1 table: its one row and its one "
                                          "column are the same single weight, 1.") if n)
    records = [{"index": i, "sum over": s, "total": float(v)} for s, t in (("keys (row sums)", rows),
                                                                              ("queries (column sums)", cols))
               for i, v in enumerate(t)]
    values = {"row_sums_all_one": bool(torch.allclose(rows, torch.ones_like(rows), atol=1e-5)),
              "column_sums_all_one": bool(torch.allclose(cols, torch.ones_like(cols), atol=1e-5)),
              "zero_above_diagonal": bool((w.triu(1) == 0).all()), "first_row": w[0].tolist()}
    return Evidence("softmax_axis", "Row and column sums of the decoder's masked self-attention weights (head 0)",
                    values, records, {"kind": "bar", "x": "index", "y": "total", "color": "sum over"}, note,
                    SOFTMAX_AXIS_LABELS)
