"""The Cost page's tables and its FLOPs chart, from core.cost's figures (no streamlit, no torch).

A figure is anything with core.cost.Figure's fields (name, value, formula, filled, unit): core.cost
imports torch, so it is read here by its fields only."""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

import altair as alt
import pandas as pd

from core.memory import human_bytes
from render.words import counted

MEMORY_UNIT = 2**30  # the fits-on table's GiB


def figure_value(f: Any) -> str:
    """A figure's value as a learner reads it: bytes in binary units with the exact count, FLOPs and
    tokens in scientific notation past a million, hours and rates to a few digits."""
    value = float(f.value)
    if math.isinf(value):
        return "never (∞)"
    if f.unit == "bytes":
        return f"{human_bytes(value)} ({value:,.0f} B)"
    if f.unit in ("GPU-hours", "tokens/s", "sequences"):
        return f"{value:,.1f} {f.unit}" if value < 1e6 else f"{value:.3g} {f.unit}"
    if abs(value) >= 1e6:
        return f"{value:.4g} {f.unit}"
    return f"{value:,.0f} {f.unit}" if value == int(value) else f"{value:,.3g} {f.unit}"


def figures_frame(figures: Mapping[str, Any], keys: Iterable[str] | None = None) -> pd.DataFrame:
    """One row a figure: its name, its value, its formula and the formula with this config's numbers."""
    names = list(keys) if keys is not None else list(figures)
    return pd.DataFrame({"figure": names, "value": [figure_value(figures[k]) for k in names],
                         "formula": [figures[k].formula for k in names],
                         "with this config's numbers": [figures[k].filled for k in names]})


def flops_frame(by_component: Mapping[str, Any]) -> pd.DataFrame:
    """FLOPs per token by component (the total left out), with each one's share of the total."""
    total = float(by_component["total"].value) or 1.0
    parts = [(k, float(f.value)) for k, f in by_component.items() if k != "total"]
    return pd.DataFrame({"component": [k for k, _ in parts], "FLOPs per token": [v for _, v in parts],
                         "share": [v / total for _, v in parts]})


def flops_spec(frame: pd.DataFrame, ink: str) -> dict:
    """A horizontal bar a component, longest first, with its share beside it."""
    bars = alt.Chart(frame).mark_bar(color="#1f77b4").encode(
        y=alt.Y("component:N", sort="-x", title=None, axis=alt.Axis(labelLimit=0, labelOverlap=False)),
        x=alt.X("FLOPs per token:Q", title="FLOPs per token, forward", axis=alt.Axis(format="~s")),
        tooltip=["component:N", alt.Tooltip("FLOPs per token:Q", format=","), alt.Tooltip("share:Q", format=".1%")],
    )
    words = bars.mark_text(align="left", dx=4, color=ink).encode(text=alt.Text("share:Q", format=".1%"))
    return (bars + words).properties(width="container", height=34 * max(len(frame), 1)).to_dict()


def fits_frame(fits: Iterable[tuple[str, bool, float]], cards: Iterable[Any]) -> pd.DataFrame:
    """The fits-on table: each GPU's datasheet figures, whether weights + cache + activations fit in
    bf16, the share of its memory they take, and the datasheet they come from."""
    by_name = {c.name: c for c in cards}
    rows = []
    for name, fits, share in fits:
        c = by_name[name]
        rows.append({"GPU": name, "fits": "yes" if fits else "no", "share of memory": f"{share:.1%}",
                     "GPUs needed": max(1, math.ceil(share)), "memory": f"{c.memory_bytes / 10**9:g} GB",
                     "bandwidth": f"{c.bandwidth / 10**9:,.0f} GB/s",
                     "bf16 peak": f"{c.bf16_flops / 10**12:,.0f} TFLOPS",
                     "source": c.source})
    return pd.DataFrame(rows)


def crossover_words(decode: Mapping[str, Any], batch: int) -> str:
    """Where decoding stops being bound by reading memory and becomes bound by compute, in words."""
    cross = float(decode["crossover batch"].value)
    if math.isinf(cross) or cross <= 0:
        return ("Decoding stays bound by memory at every batch here: each added sequence adds as many cache bytes "
                "to read as its FLOPs can cover, so a bigger batch never makes it compute-bound.")
    where = "below" if batch < cross else "at or past"
    return (f"Up to a batch of about {counted(round(cross), 'sequence')}, each step of decoding waits on reading the "
            f"weights and the cache from memory; past it, on compute. This batch ({batch}) is {where} the crossover, "
            "so " + ("reading memory is the limit: more sequences at once come almost free." if batch < cross
                     else "compute is the limit: the prefill bound applies to each step too."))


def live_frame(live: Mapping[str, int | None]) -> pd.DataFrame:
    """The live check's counted figures beside the formula's, with their difference."""
    rows = []
    pairs = (("FLOPs of one forward pass", "counted_flops", "formula_flops"),
             ("bytes saved for backward", "saved_bytes", "expected_saved_bytes"))
    for what, measured, formula in pairs:
        m, f = live.get(measured), live.get(formula)
        if m is None:
            continue
        rows.append({"what": what, "measured": f"{m:,}", "our formula": "—" if f is None else f"{f:,}",
                     "difference": "—" if f is None else f"{m - f:+,}"})
    return pd.DataFrame(rows)
