"""What every experiment shares: the caps that keep it small, ``Evidence``, and ``bounded``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from core.config import SIZE_LABELS, TransformerConfig, divisors

# Caps that keep every experiment small and quick, whatever the sliders say.
MAX_LEN = 16  # positions in a probe
MAX_WIDTH = 64  # E in a probe

# LayerNorm over 1 or 2 numbers hides a nudge to its input (bias only, or a sign).
MIN_WIDTH, RAISED_WIDTH = 3, 4

PROBE_INPUTS = 64  # random positions the FFN's nonlinearity is read off
PROBE_WIDTH = 8  # E of a wider FFN, when the config's never goes below 0
NUDGES = 8  # nudges of one position in the FFN's position-wise probe
MAX_FF = 256  # d_ff in a probe
MAX_FFN_PROBE_WIDTH = 4 * MAX_WIDTH  # widest E at which ffn_layers builds the config's own model

MAX_DEPTH = 16  # layers in the residual ablation
MAX_VOCAB = 256
MAX_MASK_DRAWN = 12  # the mask's heatmap draws at most this many positions a side
MAX_MASK_SIDE = 4096  # a real causal mask up to this side; beyond, counted by formula
MAX_HEAD_TRIES = 1024
MAX_SCORE_WIDTH = 1024  # widest q and k sampled in score_scaling

# The RNN questions' GRU runs at the learner's (N, M, E) within these bounds, capping N and E past them.
MAX_GRU_WORK = 2**24  # N * M * E**2: its matrix products' multiply-adds, over 6
MAX_GRU_ELEMENTS = 2**20  # N * M * E: its input and its output
MAX_GRU_WIDTH = 512  # E: its 6 E**2 weights
MAX_GRU_STEPS = 4096  # M: the M slider's last step


@dataclass(frozen=True)
class Evidence:
    """What one experiment showed, as plain values a page can render and a quiz can check.

    ``values`` holds the numbers (and small lists) the answers read; ``records`` are rows for one
    small chart, described by ``chart`` (kind 'line' | 'bar' | 'heatmap' and the field names).
    ``labels`` names each value for a learner ("gradient norm at the embeddings, ..."): the keys stay
    short for the quiz's rules, and only the experiment knows what it measured, and on what (one key,
    "changed_position" say, means different things in two experiments).
    """

    name: str
    title: str
    values: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    chart: dict[str, str] = field(default_factory=dict)
    note: str = ""
    labels: dict[str, str] = field(default_factory=dict)


# The learner's sizes, worded as the sidebar's sliders word them (SIZE_LABELS), for the experiments
# that show one of them beside what they measured (an experiment that shows a capped size names it itself).
SIZE_LABELS = {
    **SIZE_LABELS,
    "d_k": "d_k — one head's width, E / nhead",
    "d_ff": "d_ff — FFN hidden width",
    "nhead_kv": "nhead_kv — K/V heads",
    "layers": "layers — layers of each stack",
}


def largest_divisor_at_most(E: int, nhead: int) -> int:
    return max(d for d in divisors(E) if d <= nhead)


def bounded(cfg: TransformerConfig, uses: tuple[str, ...] | None = None,
            layer_norm: bool = True) -> tuple[TransformerConfig, str]:
    """A small config like ``cfg`` for probes that need real numbers, and a note on what was capped.

    nhead is kept when it still divides the capped E, otherwise the nearest smaller divisor is used.
    An E below MIN_WIDTH is raised to RAISED_WIDTH (see raised_note), and the note says that too.
    ``uses`` names the sizes the probe reads, when not all: the note names only those (the skip
    ablation builds its own depth, so a capped "layers" would be untrue there). ``layer_norm=False``: the probe has
    no LayerNorm, so a narrow E is kept as it is (the reason to raise it is a LayerNorm's).
    """
    changes: dict[str, Any] = {}
    if cfg.M > MAX_LEN:
        changes["M"] = MAX_LEN
    if cfg.M_target is not None and cfg.M_target > MAX_LEN:  # a single stack has no target
        changes["M_target"] = MAX_LEN
    if cfg.E > MAX_WIDTH:
        changes["E"] = MAX_WIDTH
    if cfg.E < MIN_WIDTH and layer_norm:
        changes["E"] = RAISED_WIDTH
    E = changes.get("E", cfg.E)
    nhead = cfg.nhead if E % cfg.nhead == 0 else largest_divisor_at_most(E, cfg.nhead)
    if nhead != cfg.nhead:
        changes["nhead"] = nhead
        changes["nhead_kv"] = largest_divisor_at_most(nhead, cfg.nhead_kv)  # K/V heads must still divide it
    if cfg.positional == "rope" and (E // nhead) % 2:
        changes["positional"] = "none"  # RoPE turns pairs: an odd d_k (a capped E's) has none to turn
    if cfg.d_ff > MAX_FF:
        changes["d_ff"] = MAX_FF
    if cfg.layers > 2:
        changes["layers"] = 2
    if cfg.vocab_size > MAX_VOCAB:
        changes["vocab_size"] = MAX_VOCAB
    if cfg.N > 2:
        changes["N"] = 2
    if not changes:
        return cfg, ""
    small = cfg.replace(max_len=max(changes.get("M", cfg.M), changes.get("M_target", cfg.M_target or 0)), **changes)
    capped = [f"{k}={v}" for k, v in changes.items()
              if not (k == "E" and v > cfg.E) and (uses is None or k in uses)]
    note = " ".join(n for n in ("Run at capped sizes to stay fast: " + ", ".join(capped) + "." if capped else "",
                                raised_note(cfg) if layer_norm else "") if n)
    return small, note


def in_family(cfg: TransformerConfig, arch: str) -> TransformerConfig:
    """``cfg``'s sizes and parts as a model of family ``arch``: a single stack has no M_target to keep."""
    if arch == cfg.arch:
        return cfg
    return cfg.replace(arch=arch, M_target=None) if arch != "encoder-decoder" else cfg.replace(arch=arch)


def raised_note(cfg: TransformerConfig) -> str:
    """Why a probe runs at E=RAISED_WIDTH when the config's E is below MIN_WIDTH; '' otherwise."""
    if cfg.E >= MIN_WIDTH:
        return ""
    return (f"Run at E={RAISED_WIDTH}, not E={cfg.E}: a LayerNorm over one number always gives its bias, and "
            "over two it keeps only which one is larger, so a layer's output would say almost nothing about its "
            "input.")


def generator(seed: int) -> torch.Generator:
    """A private generator: seeding the global one would change every other caller's random stream."""
    return torch.Generator().manual_seed(seed)
