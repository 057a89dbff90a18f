"""Rotary positions: what RoPE turns, that it adds no parameters, and that a turned q·k depends on the
offset between two positions only."""

from __future__ import annotations

import torch

from core.config import TransformerConfig
from core.model import Transformer
from core.positions import apply_rope, rope_angles, sinusoidal_table
from .base import Evidence, bounded, generator

SHIFTS = tuple(range(0, 13, 2))  # s: both positions moved on by s
PAIRS = ((3, 1), (5, 5), (2, 7))  # (i, j): query position, key position
MAX_ROPE_WIDTH = 64  # d_k of the relative probe


def _even(d: int) -> int:
    """The nearest even width at or under MAX_ROPE_WIDTH, at least 2: RoPE turns dimensions in pairs."""
    return max(2, min(d, MAX_ROPE_WIDTH) // 2 * 2)


ROPE_PROBE_LABELS = {
    "d_k": "d_k — one head's width",
    "pairs": "pairs of dimensions RoPE turns, each at its own rate",
    "slowest_rate": "the last pair's rate, 10000^(−(d_k − 2)/d_k) at your d_k",
    "q_turned": "queries changed by RoPE",
    "k_turned": "keys changed by RoPE",
    "v_turned": "values changed by RoPE",
    "input_changed": "the first layer's input changed by RoPE",
    "rope_parameters": "parameters RoPE adds to the model",
    "rope_shift_difference": "RoPE: largest change of q·k over the shifts",
    "added_shift_difference": "sinusoids added: largest change of q·k over the shifts",
    "relative": "RoPE's q·k the same at (i, j) and (i + s, j + s)",
}


def rope_probe(cfg: TransformerConfig) -> Evidence:
    """One model of the learner's family at capped sizes, run with RoPE and with no positions on the same
    weights (RoPE has none of its own): which tensors change. Then one query and one key, turned at
    positions (i, j) and (i + s, j + s): their product, against the same with sinusoids added instead."""
    small, note = bounded(cfg.replace(positional="none"), uses=("M", "E", "nhead", "d_ff", "layers", "vocab_size"))
    if small.d_k % 2:  # RoPE needs pairs: one head as wide as E, or E raised by one
        E = small.E if small.E % 2 == 0 else small.E + 1
        small = small.replace(E=E, nhead=1, nhead_kv=1, d_ff=small.d_ff)
        note = " ".join(n for n in (note, f"Run at nhead=1, d_k={E}: RoPE needs an even d_k.") if n)
    if small.M < 2:  # at position 0 the turn is the identity: a second position shows what RoPE turns
        small = small.replace(M=2, max_len=max(small.max_len, 2))
        note = " ".join(n for n in (note, "Run at M=2: at M=1 the only position is 0, where RoPE turns nothing.")
                        if n)
    rope = small.replace(positional="rope")
    counts, recs = {}, {}
    for c in (small, rope):
        model = Transformer.from_config(c).train(False)
        counts[c.positional] = sum(p.numel() for p in model.parameters())
        rec: dict[str, torch.Tensor] = {}
        src = torch.randint(0, c.vocab_size, (1, c.M), generator=generator(c.seed))  # (1, M)
        with torch.no_grad():
            if c.arch == "decoder-only":
                model(None, src, rec=rec)
            else:
                model(src, src if c.arch == "encoder-decoder" else None, rec=rec)
        recs[c.positional] = rec
    stack, side = ("dec", "tgt") if small.arch == "decoder-only" else ("enc", "src")
    attn = f"{stack}.0.self_attn."

    def turned(name: str) -> bool:
        return not torch.equal(recs["none"][name], recs["rope"][name])

    d = _even(cfg.d_k)
    angles = rope_angles(max(SHIFTS) + 10, d)  # (positions, d)
    table = sinusoidal_table(max(SHIFTS) + 10, d)  # (positions, d)
    gen = generator(cfg.seed)
    q, k = torch.randn(d, generator=gen), torch.randn(d, generator=gen)  # (d,), (d,)
    records, spread = [], {"RoPE": 0.0, "sinusoids added": 0.0}
    for i, j in PAIRS:
        scores = {"RoPE": [apply_rope(q, angles[i + s]) @ apply_rope(k, angles[j + s]) for s in SHIFTS],
                  "sinusoids added": [(q + table[i + s]) @ (k + table[j + s]) for s in SHIFTS]}
        for kind, row in scores.items():
            spread[kind] = max(spread[kind], float(max(row) - min(row)))
            records += [{"shift s": s, "q·k": float(v), "positions": f"{kind}, (i, j) = ({i}, {j})"}
                        for s, v in zip(SHIFTS, row)]
    scale = float(q.norm() * k.norm())
    even = cfg.d_k + cfg.d_k % 2
    values = {"d_k": cfg.d_k, "pairs": len(torch.unique(rope_angles(2, even)[1])),
              "slowest_rate": float(rope_angles(2, even)[1].min()),
              "q_turned": turned(attn + "q"), "k_turned": turned(attn + "k"), "v_turned": turned(attn + "v"),
              "input_changed": turned(f"{side}.sum"), "rope_parameters": counts["rope"] - counts["none"],
              "rope_shift_difference": spread["RoPE"], "added_shift_difference": spread["sinusoids added"],
              "relative": spread["RoPE"] <= 1e-4 * scale}
    if d != cfg.d_k:
        note = " ".join(n for n in (note, f"q·k measured at d_k={d}.") if n)
    return Evidence("rope_probe", "What RoPE turns, and q·k as both positions move on by s", values, records,
                    {"kind": "line", "x": "shift s", "y": "q·k", "color": "positions"}, note, ROPE_PROBE_LABELS)
