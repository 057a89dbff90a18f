"""The KV cache's memory against the tokens it holds, for MHA, GQA and MQA on one chart (no streamlit, no torch)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import altair as alt

from core.memory import human_bytes
from render.palette import INK
from render.tables import FIT_WIDTH, described, fill_data, in_words

if TYPE_CHECKING:  # a type only: core.views imports torch
    from core.views import KVCacheView

KIND_COLOURS = {"MHA": "#d62728", "GQA": "#1f77b4", "MQA": "#2ca02c"}


@lru_cache(maxsize=None)
def _kv_template(ink: str, domain: tuple[str, ...], colours: tuple[str, ...]) -> dict:
    """Built and validated by Altair once per theme and set of lines; only the rows change."""
    lines = alt.Chart(alt.NamedData(name="points")).mark_line().encode(
        x=alt.X("tokens:Q", scale=alt.Scale(type="log", base=2), title="tokens in the cache, M + G (log scale)"),
        y=alt.Y("bytes:Q", scale=alt.Scale(type="log"), title="cache bytes, float32 (log scale)",
                axis=alt.Axis(format="~s")),
        color=alt.Color("attention:N", title=None, scale=alt.Scale(domain=list(domain), range=list(colours)),
                        legend=alt.Legend(orient="bottom", columns=1, labelLimit=0)),
        tooltip=["attention:N", alt.Tooltip("tokens:Q", format=","), "memory:N"],
    )
    # The chosen config: a ringed point on its own line, with its words beside it (not only in a tooltip).
    point = alt.Chart(alt.NamedData(name="chosen")).mark_point(size=140, filled=False, strokeWidth=2.5).encode(
        x="tokens:Q", y="bytes:Q", color=alt.value(ink), tooltip=["what:N"])
    label = alt.Chart(alt.NamedData(name="chosen")).mark_text(align="right", dx=-10, dy=-12).encode(
        x="tokens:Q", y="bytes:Q", text="label:N", color=alt.value(ink))
    return alt.layer(lines, point, label).properties(height=300, autosize=FIT_WIDTH).to_dict()


def kv_cache_spec(view: KVCacheView, theme: str = "light") -> dict:
    """Log-log lines of the cache's bytes against M + G, one per kind of attention, with the config's own marked."""
    names = [name for name in KIND_COLOURS if name in view.kinds]
    domain = tuple(f"{name} (nhead_kv = {view.kinds[name]})" for name in names)
    colours = tuple(KIND_COLOURS[name] for name in names)
    chosen = view.chosen
    what = f"yours: {chosen['attention']}, M + G = {chosen['tokens']:,}, {human_bytes(chosen['bytes'])}"
    rows = {"points": [{**p, "memory": human_bytes(p["bytes"])} for p in view.points],
            "chosen": [{**chosen, "what": what, "label": f"yours: {human_bytes(chosen['bytes'])}"}]}
    spec = fill_data(_kv_template(INK[theme]["label"], domain, colours), rows)
    ratios = in_words(f"{name} {view.kinds[name]} K/V head{'s' if view.kinds[name] > 1 else ''}" for name in names)
    return described(spec, f"Line chart, log-log, of the KV cache's bytes against the tokens it holds, for {ratios}: "
                           f"each line is straight, and fewer K/V heads lower it by the same factor at every "
                           f"length. {what}.")


def cache_formula(view: KVCacheView) -> str:
    """The cache's size as the formula, with the config's numbers in it."""
    layers, two, N, kv, tokens, d_k = view.shape
    return (f"2 · layers · N · nhead_kv · (M + G) · d_k · 4 bytes = 2 · {layers} · {N} · {kv} · {tokens:,} · {d_k} "
            f"· 4 = {view.bytes:,} bytes ({human_bytes(view.bytes)}); in fp16, {human_bytes(view.bytes_fp16)}")
