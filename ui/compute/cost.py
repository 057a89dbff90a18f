"""Cost reports for the Cost and Compare pages, cached by config and settings and shared by every session.

The figures are formulas over the config and take milliseconds; the live check (FlopCounterMode on the
model's own pass, and for small configs one real training step) runs the model, so it is cached apart."""

from __future__ import annotations

import streamlit as st

from core import TransformerConfig
from core.compare import Line, compare
from core.cost import CostReport, CostSettings, counted_flops, cost_report


@st.cache_data(max_entries=64, show_spinner=False)
def cached_report(cfg: TransformerConfig, settings: CostSettings) -> CostReport:
    """Every figure of the config at these settings, without the live check."""
    return cost_report(cfg, settings, live=False)


@st.cache_data(max_entries=32, show_spinner=False)
def cached_live(cfg: TransformerConfig) -> dict[str, int | None]:
    """The live check: the counted FLOPs of one forward pass (on the meta device when large) and, when small,
    the bytes saved for backward in one real step beside our exact count. It depends on the config alone."""
    return cost_report(cfg, CostSettings(), live=True).live


@st.cache_data(max_entries=32, show_spinner=False)
def cached_counted_flops(cfg: TransformerConfig) -> int:
    """FlopCounterMode's count of one forward pass, for a config too large for the rest of the live check."""
    return counted_flops(cfg)


@st.cache_data(max_entries=32, show_spinner=False)
def cached_compare(a: TransformerConfig, b: TransformerConfig) -> list[Line]:
    """core.compare's lines for A against B."""
    return compare(a, b)
