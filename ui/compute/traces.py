"""Traces for the pages, cached by config and shared by every session, and what to say when one is
shape-only.

Data flows one way: the sidebar's TransformerConfig -> core.trace, cached here -> plain values for
the pages. Nothing in this module does tensor maths."""

from __future__ import annotations

import dataclasses

import streamlit as st

from core import DEFAULT_BUDGET_BYTES, Trace, TransformerConfig, estimate, human_bytes, trace
from core.kv_cache import CacheCheck, check_cache
from core.slim import MAX_SLIM_DRAWS, slim_estimate
from ui.compute.trace_cache import shared_trace


# The explorer's table needs shapes only: a real pass up to this size, above it the same code on the meta
# device, so a slider move stays fast.
LIVE_TABLE_BYTES = 32 * 2**20


def cached_trace(cfg: TransformerConfig) -> Trace:
    """One trace per config, shared by all sessions; treat it (and its tensors) as read-only.

    Sharing is safe because a Trace is frozen, its tensors were made under inference mode (an
    in-place change raises) and no page does tensor maths; core.views cuts what pages draw.
    Memory stays bounded for the whole process: see ui/compute/trace_cache.py.
    """
    return shared_trace(cfg)  # no st.* call here: cached functions (cached_shapes) call this


@st.cache_data(max_entries=64, show_spinner=False)
def cached_shapes(cfg: TransformerConfig) -> Trace:
    """A trace without tensor values, for pages that only show shapes, counts and bytes.

    Small configs: the real pass (shapes read off live tensors). Larger ones: the same forward
    code on the meta device, which gives identical shapes far faster. ``over_budget`` tells
    the two reasons for a shape-only result apart.
    """
    if estimate(cfg).total <= LIVE_TABLE_BYTES:
        return dataclasses.replace(cached_trace(cfg), tensors={})
    return trace(cfg, shape_only=True)


@st.cache_data(max_entries=64, show_spinner=False)
def cached_shape_only(cfg: TransformerConfig) -> Trace:
    """A shape-only trace of this config, for what must be read off one (the quiz's shape evidence):
    ``cached_shapes`` when that is one, else one made and kept here, once for all who ask."""
    t = cached_shapes(cfg)
    return t if t.shape_only else trace(cfg, shape_only=True)


def over_budget(t: Trace) -> bool:
    """True when the core refuses a real pass of this config: it would not fit the budget."""
    return t.estimate.over(t.budget_bytes)


def config_over_budget(cfg: TransformerConfig) -> bool:
    """``over_budget`` of the trace this config would get, from the estimate alone, for a page that
    needs no pass (even a shape-only trace of the deepest model is not free). Every trace the pages get
    that is over it has core's default budget (the gate's, for the rest, is the same)."""
    return estimate(cfg).over(DEFAULT_BUDGET_BYTES)


# The parts of a slim pass (core.slim.SlimEstimate) and the sliders that shrink each most.
_SLIM_PARTS = {
    "tables": ("its token table", "vocab_size and E"),
    "layer": ("one layer's weights", "E and d_ff"),
    "maps": ("one sequence's attention maps", "M, M_target and nhead"),
    "rest": ("one sequence's other activations", "M, M_target, E, d_ff and nhead"),
    "ids": ("the batch's token ids", "N, M and M_target"),
}


def slim_refusal(cfg: TransformerConfig, budget_bytes: int) -> str:
    """Why not even a slim pass, and which sliders to move first, for the 'No values to draw' message:
    its memory first, as more layers never help that; then the weights it would draw."""
    est = slim_estimate(cfg)
    if est.total <= budget_bytes:
        return (f"A slim pass, one sequence with one layer at a time in memory, would draw {est.draws / 1e6:,.0f} "
                f"million weights for the deepest map, more than the {MAX_SLIM_DRAWS / 1e6:,.0f} million it may draw "
                "(about a second): lowering layers, E and d_ff shrinks that.")
    part = max(_SLIM_PARTS, key=lambda name: getattr(est, name))
    what, sizes = _SLIM_PARTS[part]
    if cfg.M_target is None:  # a single stack has no target length to lower
        sizes = {"maps": "M and nhead", "rest": "M, E, d_ff and nhead", "ids": "N and M"}.get(part, sizes)
    return (f"A slim pass, one sequence with one layer at a time in memory, would need about "
            f"{human_bytes(est.total)}, over the {human_bytes(budget_bytes)} budget. Its largest part is {what}, "
            f"{human_bytes(getattr(est, part))}: lowering {sizes} shrinks it most.")


def shape_only_banner(t: Trace) -> None:
    """The visible banner for a config the core can only trace shape-only."""
    if over_budget(t):
        st.warning(
            f"**Shape-only pass.** A real forward pass of this model would need about "
            f"{human_bytes(t.estimate.total)}, over the {human_bytes(t.budget_bytes)} budget, so the "
            "same code ran on PyTorch's meta device: every shape is real, but no values were computed."
            + (" The Attention page still draws its heatmaps, from a slim pass: one sequence, with one layer at a "
               "time in memory." if not slim_estimate(t.config).over(t.budget_bytes) else ""),
            icon=":material/straighten:",
        )


@st.cache_data(max_entries=32, show_spinner=False)
def cached_cache_check(cfg: TransformerConfig, G: int) -> CacheCheck:
    """The KV cache's live check for a config and G, once for all sessions (core.kv_cache.check_cache); the
    caller asks core.kv_cache.check_refusal first, which keeps it small."""
    return check_cache(cfg, G)
