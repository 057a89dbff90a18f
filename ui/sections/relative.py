"""The positional page's tab for T5's relative positions: each stack's bucket of every (query, key) pair as a
heatmap, the offsets each bucket holds, and the table's parameters counted on the model itself."""

from __future__ import annotations

import streamlit as st

from core.config import TransformerConfig
from core.views import relative_view
from render.relative import bucket_offsets_frame, relative_buckets_frame, relative_buckets_spec
from render.words import counted
from ui.compute.traces import cached_shapes
from ui.look.charts import drawn_at_this_link, map_box, show_chart
from ui.look.layout import phone_only_caption


@st.cache_data(max_entries=64, show_spinner=False)
def _relative_view(cfg: TransformerConfig):
    return relative_view(cfg)


def relative_words(cfg: TransformerConfig) -> str:
    """What this model does with positions, for the page's first caption."""
    return ("This model uses **relative** positions, as T5 does: nothing is added to its token embeddings. Each "
            "stack's first layer holds a small table, one learned number per bucket and head, and every layer of "
            "that stack adds the number of the bucket of j − i to the score of query i and key j. "
            "Cross-attention gets none.")


def relative_tab(cfg: TransformerConfig) -> None:
    """Every stack's buckets as a heatmap, with the numbers and the offsets each bucket holds."""
    params = cached_shapes(cfg).params
    views = _relative_view(cfg)
    B, D = cfg.relative_buckets, cfg.relative_max_distance
    st.caption(f"Each stack's table is relative_buckets × nhead = {B} × {cfg.nhead}: this model's positional "
               f"parameters number {params['positional table']:,} of its {params['total']:,}, counted on the model "
               f"itself ({counted(len(views), 'table')}, one per stack). Small offsets get a "
               f"bucket each; larger ones share buckets that widen logarithmically up to relative_max_distance = "
               f"{D}, and every offset beyond that shares the last bucket. Pairs on one diagonal (the same "
               "offset j − i) always share a bucket, so the bias depends on how far apart two tokens are, not on "
               "where they sit.")
    for v in views:
        st.subheader(f"{v.stack.capitalize()}: " + ("bidirectional" if v.bidirectional else "causal"))
        half = f"{B // 2} for keys before the query and {B // 2} for keys after it" if v.bidirectional else (
            f"all {B} for keys at or before the query: later keys are masked, and the function puts them in bucket 0")
        st.caption(f"The {v.stack}'s buckets split {half}.")
        if v.positions < v.length:
            st.caption(f"Drawn: the first {v.positions} of {v.length} positions (capped so large sizes stay fast).")
        spec = relative_buckets_spec(v, B)
        with map_box(f"relative_{v.stack}", "On a screen narrower than the map, the map scrolls sideways inside "
                                            "its box.", spec):
            show_chart(drawn_at_this_link(spec), width="content")
        # Whole numbers, one expander per stack: ui.look.charts.show_numbers writes three decimals and one per page.
        with st.expander(f"The {v.stack}'s buckets as numbers, query i down, key j across"):
            phone_only_caption("A wide table scrolls sideways: swipe it for every column.",
                               key=f"relative_numbers_{v.stack}")
            st.table(relative_buckets_frame(v))
        st.table(bucket_offsets_frame(v))
