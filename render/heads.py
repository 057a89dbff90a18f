"""Grouped-query attention on the attention page: which query heads read which K/V head (no streamlit, no torch)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import altair as alt
import pandas as pd

from render.charts import BAND_AXIS
from render.tables import described, fill_data, in_words
from render.words import counted

if TYPE_CHECKING:  # types only: core.views imports torch
    from core.views import KVSharing

MAX_HEADS_DRAWN = 64  # query heads drawn; past it the table alone says the groups
MAX_GROUP_ROWS = 64  # K/V heads listed in the table
HEAD_PX, ROW_PX = 36, 36  # wide enough for a K/V head's number
MOST_PX = 640  # the row's width at most; many heads go unlabelled


def heads_text(heads: list[int]) -> str:
    """A run of heads as 'a to b', a short list in words."""
    if len(heads) > 2 and heads == list(range(heads[0], heads[-1] + 1)):
        return f"{heads[0]} to {heads[-1]}"
    return in_words(heads)


def kv_groups_frame(s: KVSharing) -> pd.DataFrame:
    """One row per K/V head (the first MAX_GROUP_ROWS): the query heads that read its K and V."""
    rows = range(min(s.nhead_kv, MAX_GROUP_ROWS))
    return pd.DataFrame({"query heads that read it": [heads_text(s.readers(g)) for g in rows],
                         "how many": [len(s.readers(g)) for g in rows]},
                        index=pd.Index([f"K/V head {g}" for g in rows], name="K/V head"))


@lru_cache(maxsize=None)
def _heads_template() -> dict:
    cells = alt.Chart(alt.NamedData(name="heads"))
    rect = cells.mark_rect(stroke="white", strokeWidth=2).encode(
        x=alt.X("query head:O", title="query head (each cell: the K/V head it reads)",
                axis=alt.Axis(labelAngle=0, labelOverlap=True, **BAND_AXIS)),
        color=alt.Color("K/V head:N", legend=None, scale=alt.Scale(scheme="tableau20")),
        tooltip=["query head:O", "K/V head:O"],
    )
    text = cells.mark_text(color="black").encode(x="query head:O", text="K/V head:O")
    return alt.layer(rect, text).to_dict()


@lru_cache(maxsize=None)
def _unlabelled_template() -> dict:
    return {**_heads_template(), "layer": _heads_template()["layer"][:1]}


def kv_heads_spec(s: KVSharing) -> dict:
    """The query heads in a row, each cell coloured and labelled by the K/V head it reads."""
    shown = min(s.nhead, MAX_HEADS_DRAWN)
    cell = min(HEAD_PX, MOST_PX // shown)
    template = _heads_template() if cell >= 16 else _unlabelled_template()  # a number fits 16 px, not 10
    spec = fill_data(template, {"heads": [{"query head": h, "K/V head": s.kv_head[h]} for h in range(shown)]})
    spec["width"], spec["height"] = max(96, cell * shown), ROW_PX
    spec["autosize"] = {"type": "pad", "contains": "padding"}
    each = "read" if s.nhead_kv == 1 else "each read"
    return described(spec, f"{shown} query heads in a row, each labelled with the K/V head it reads: "
                           f"{counted(s.nhead_kv, 'K/V head')}, {each} by {s.group} query heads.")
