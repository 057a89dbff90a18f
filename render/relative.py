"""T5's relative positions on the positional page: the bucket of every (query, key) pair as a heatmap, and which
offsets each bucket holds, as a table (no streamlit, no torch)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import altair as alt
import pandas as pd

from render.charts import BAND_AXIS, MAX_SIDE, MIN_PLOT, PER_CELL, WEIGHTS_DECOR
from render.tables import described, fill_data
from render.words import counted

if TYPE_CHECKING:  # types only: core.views imports torch
    from core.views import RelativeBuckets


def _buckets_template(buckets: int) -> dict:
    # A bucket is a label, not an amount, but neighbouring offsets get neighbouring buckets: a sequential scale
    # shows the bands along the diagonals.
    return alt.Chart(alt.NamedData(name="cells")).mark_rect().encode(
        x=alt.X("key:O", title="key position j", axis=alt.Axis(labelAngle=0, labelOverlap=True, **BAND_AXIS)),
        y=alt.Y("query:O", title="query position i", axis=alt.Axis(labelOverlap=True, **BAND_AXIS)),
        color=alt.Color("bucket:Q", scale=alt.Scale(scheme="viridis", domain=[0, buckets - 1]), title="bucket"),
        tooltip=["query:O", "key:O", alt.Tooltip("offset:Q", title="offset j − i"), "bucket:Q"],
    ).to_dict()


def relative_buckets_spec(v: RelativeBuckets, buckets: int) -> dict:
    """Queries down, keys across: each cell is the bucket whose bias that pair's score gets."""
    cells = [{"query": i, "key": j, "offset": j - i, "bucket": b}
             for i, row in enumerate(v.buckets) for j, b in enumerate(row)]
    spec = fill_data(_buckets_template(buckets), {"cells": cells})
    spec["width"] = min(MAX_SIDE - WEIGHTS_DECOR[0], max(MIN_PLOT, PER_CELL * v.positions))
    spec["height"] = min(MAX_SIDE - WEIGHTS_DECOR[1], max(MIN_PLOT, PER_CELL * v.positions))
    spec["autosize"] = {"type": "pad", "contains": "padding"}
    spec["usermeta"] = {"decor": list(WEIGHTS_DECOR)}  # for charts.full_width
    kind = "bidirectional" if v.bidirectional else "causal"
    return described(spec, f"Heatmap of the {v.stack}'s relative position buckets ({kind}): "
                           f"{counted(v.positions, 'query position')} down, {counted(v.positions, 'key position')} "
                           f"across, coloured by bucket, 0 to {buckets - 1}.")


def relative_buckets_frame(v: RelativeBuckets) -> pd.DataFrame:
    """The buckets, one row per query position, one column per key position."""
    return pd.DataFrame(v.buckets, index=[f"query {i}" for i in range(v.positions)],
                        columns=[f"key {j}" for j in range(v.positions)])


def bucket_offsets_frame(v: RelativeBuckets) -> pd.DataFrame:
    """Each bucket shown and the offsets j − i it holds here: a bucket of several offsets shares one bias."""
    rows = [{"bucket": b, "offsets j − i": str(low) if low == high else f"{low} to {high}",
             "offsets sharing it": high - low + 1} for b, (low, high) in v.offsets.items()]
    return pd.DataFrame(rows).set_index("bucket")
