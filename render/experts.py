"""Charts of a mixture of experts (no streamlit, no torch): where the parameters sit, total against active; the
router's weights as a tokens × experts heatmap with each token's top_k ringed; tokens per expert against the
even share."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import altair as alt

from render.palette import INK
from render.tables import FIT_WIDTH, described, fill_data, in_words
from render.words import counted

if TYPE_CHECKING:  # types only: core's package imports torch
    from core.param_parts import ParamPart
    from core.routing import RoutingView

TOTAL, ACTIVE = "total", "active for one token"
PART_COLOURS = ("#aec7e8", "#1f77b4")  # total light, active dark: the active bar is drawn inside the total
CELL_PX = 22  # a heatmap cell, wide enough for a rank's digit
MIN_PLOT = 110
TOKEN_LABEL_PX = 120  # a longer token label is cut with "…"
LABEL_CHAR_PX = 6  # an axis label's letter, roughly
SCALE_DECOR = (134, 90)  # (width, height) the colour scale and the expert axis take, as render.charts' heatmaps


def short_count(n: int) -> str:
    """1,536 as it is; 12.9M, 4.6B, 654.0B from a million on."""
    for size, unit in ((10**12, "T"), (10**9, "B"), (10**6, "M")):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n:,}"


@lru_cache(maxsize=None)
def _parts_template() -> dict:
    scale, legend = alt.Scale(domain=[TOTAL, ACTIVE], range=list(PART_COLOURS)), alt.Legend(orient="bottom")
    # Each bar's figures in its label: a text past the longest bar's end would run off the chart.
    y = alt.Y("label:N", sort=None, title=None, axis=alt.Axis(labelLimit=260))
    tooltip = ["part:N", alt.Tooltip("total:Q", format=","), alt.Tooltip("active:Q", format=",")]
    total = alt.Chart(alt.NamedData(name="parts")).mark_bar().encode(
        x=alt.X("total:Q", title="parameters", axis=alt.Axis(format="~s")), y=y,
        color=alt.Color("total_name:N", scale=scale, legend=legend, title=None),
        tooltip=tooltip)
    active = alt.Chart(alt.NamedData(name="parts")).mark_bar(height={"band": 0.5}).encode(
        x="active:Q", y=y, color=alt.Color("active_name:N", scale=scale, legend=legend, title=None),
        tooltip=tooltip)
    return alt.layer(total, active).properties(autosize=FIT_WIDTH).to_dict()


def param_parts_spec(parts: list[ParamPart]) -> dict:
    """Horizontal bars, one per part in the order a token meets them: the whole bar its total, the dark bar inside
    it what one token's pass touches (only the routed experts' is shorter)."""
    rows = [{"part": p.name, "total": p.total, "active": p.active, "total_name": TOTAL, "active_name": ACTIVE,
             "label": f"{p.name}: {short_count(p.total)}" + (
                 "" if p.active == p.total else f", {short_count(p.active)} active")} for p in parts]
    spec = fill_data(_parts_template(), {"parts": rows})
    spec["height"] = 34 * len(parts)
    total, active = sum(p.total for p in parts), sum(p.active for p in parts)
    bars = "; ".join(f"{p.name} {p.total:,}" + ("" if p.active == p.total else f" ({p.active:,} active)")
                     for p in parts)
    return described(spec, f"Bar chart of the model's {total:,} parameters by part, {active:,} of them active for "
                           f"one token, on a linear scale: {bars}.")


@lru_cache(maxsize=None)
def _routing_template(ring: str) -> dict:
    cells = alt.Chart(alt.NamedData(name="cells")).mark_rect().encode(
        x=alt.X("expert:O", title="expert", axis=alt.Axis(labelAngle=0, labelFlush=False)),
        y=alt.Y("token:O", title="token", axis=alt.Axis(labelFlush=False, labelLimit=TOKEN_LABEL_PX)),
        color=alt.Color("weight:Q", scale=alt.Scale(scheme="viridis", domainMin=0), title="router weight"),
        tooltip=["token:O", "expert:O", alt.Tooltip("weight:Q", format=".4f"), "choice:N"],
    )
    # Each token's top_k experts: ringed, with their rank (1 the best), so a choice reads without its colour.
    rings = alt.Chart(alt.NamedData(name="cells")).transform_filter("datum.rank > 0").mark_rect(
        fill=None, stroke=ring, strokeWidth=2).encode(x="expert:O", y="token:O")
    ranks = alt.Chart(alt.NamedData(name="cells")).transform_filter("datum.rank > 0").mark_text(
        fontSize=11, fontWeight="bold", color=ring).encode(x="expert:O", y="token:O", text="rank:Q")
    return alt.layer(cells, rings, ranks).to_dict()


def routing_cells(v: RoutingView, labels: list[str]) -> list[dict]:
    """One record per (token, expert) cell drawn: the router's weight, and the token's rank for that expert."""
    out = []
    for i, (row, chosen) in enumerate(zip(v.probs, v.chosen)):
        rank = {e: r for r, e in enumerate(chosen, 1)}
        for e, w in enumerate(row):
            out.append({"token": labels[i], "expert": e, "weight": w, "rank": rank.get(e, 0),
                        "choice": f"choice {rank[e]} of {v.top_k}" if e in rank else "not chosen"})
    return out


def routing_spec(v: RoutingView, labels: list[str], theme: str = "light") -> dict:
    """Heatmap of one sequence's router weights (softmax over the router's logits), tokens down, experts across;
    each token's top_k ringed with its rank. ``labels`` name the rows (the learner's tokens, distinct and
    escaped, or the positions and their ids)."""
    labels = list(labels[:v.rows])
    spec = fill_data(_routing_template(INK[theme]["alert"]), {"cells": routing_cells(v, labels)})
    for layer in spec["layer"]:
        layer["encoding"]["y"]["sort"] = labels  # by position, not by the labels' text
    spec["width"] = max(MIN_PLOT, CELL_PX * v.columns)
    spec["height"] = max(MIN_PLOT, CELL_PX * v.rows)
    spec["autosize"] = {"type": "pad", "contains": "padding"}
    # What is drawn beside the cells, for render.charts.full_width: the token labels and the colour scale.
    spec["usermeta"] = {"decor": [SCALE_DECOR[0] + min(TOKEN_LABEL_PX, LABEL_CHAR_PX * max(map(len, labels))),
                                  SCALE_DECOR[1]]}
    cut = "" if v.rows == v.tokens else f" (the first {v.rows} of its {v.tokens})"
    experts = "" if v.columns == v.n_experts else f" (the first {v.columns} of {v.n_experts})"
    firsts = [f"{label} → expert {chosen[0]}" for label, chosen in zip(labels[:3], v.chosen)]
    over = "the one expert" if v.n_experts == 1 else f"all {v.n_experts} experts"
    ringed = "choice is ringed and numbered" if v.top_k == 1 else "choices are ringed and numbered, 1 the best"
    return described(spec, f"Heatmap of the router's weights in layer {v.layer}, sequence {v.item}: "
                           f"{counted(v.rows, 'token')} down{cut}, {counted(v.columns, 'expert')} across{experts}, "
                           f"each row summing to 1 over {over}; each token's top_k = {v.top_k} {ringed}. "
                           f"First choice{'s' if len(firsts) > 1 else ''}: {in_words(firsts)}.")


@lru_cache(maxsize=None)
def _counts_template(ink: str) -> dict:
    bars = alt.Chart(alt.NamedData(name="counts")).mark_bar(color="#1f77b4").encode(
        x=alt.X("expert:O", title="expert", axis=alt.Axis(labelAngle=0, labelOverlap=True)),
        y=alt.Y("tokens:Q", title="tokens routed to it, T_e"),
        tooltip=["expert:O", "tokens:Q"])
    even = alt.Chart(alt.NamedData(name="even")).mark_rule(strokeDash=[6, 3], strokeWidth=2, color=ink).encode(
        y="tokens:Q", tooltip=[alt.Tooltip("what:N", title="even share")])
    words = alt.Chart(alt.NamedData(name="even")).mark_text(align="left", baseline="bottom", dy=-3, x=4).encode(
        y="tokens:Q", text="what:N", color=alt.value(ink))
    return alt.layer(bars, even, words).properties(height=220, autosize=FIT_WIDTH).to_dict()


def tokens_per_expert_spec(v: RoutingView, N: int, theme: str = "light") -> dict:
    """Bars of tokens per expert over the batch's N·M tokens, against the even share N·M·top_k / n_experts."""
    if v.counts is None:
        raise ValueError("a shape-only pass counted no tokens per expert; draw this after a real pass")
    share = f"even share N·M·top_k / n_experts = {N}·{v.tokens}·{v.top_k} / {v.n_experts} = {v.even_share:g}"
    spec = fill_data(_counts_template(INK[theme]["label"]),
                     {"counts": [{"expert": e, "tokens": n} for e, n in enumerate(v.counts)],
                      "even": [{"tokens": v.even_share, "what": share}]})
    busiest = max(range(v.n_experts), key=lambda e: v.counts[e])
    idle = sum(1 for n in v.counts if n == 0)
    who = "the one expert" if v.n_experts == 1 else f"each of the {v.n_experts} experts"
    return described(spec, f"Bar chart of the tokens {who} got in layer {v.layer}, "
                           f"{counted(sum(v.counts), 'choice')} in all, against a dashed line at the {share}. The "
                           f"busiest, expert {busiest}, got {v.counts[busiest]}; {idle} got none.")
