"""Drawing charts and their numbers on a page: in the theme's ink, afresh per link, scrolling sideways
on a phone."""

from __future__ import annotations

from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from render.charts import PHONE_COLUMN, full_width, scroll_width, scrolls_on_the_narrowest_phone
from render.palette import INK
from ui.look.layout import narrowest_only_caption, phone_only_caption, with_wrapper
from ui.look.theme import theme


def drawn_at_this_link(chart: Any) -> Any:
    """A chart (a spec, or an Altair chart) that the browser draws afresh whenever the page's link changes: for
    every chart with a colour scale, whose gradient Vega names by the page's address at drawing time
    (vega/vega#3948; docs/layout.md). The link goes in the spec's ``usermeta``, which Vega ignores."""
    link = "&".join(f"{k}={v}" for k, v in st.query_params.to_dict().items())
    if isinstance(chart, dict):
        chart["usermeta"] = {**chart.get("usermeta", {}), "link": link}
        return chart
    meta = chart.usermeta if isinstance(chart.usermeta, dict) else {}
    return chart.properties(usermeta={**meta, "link": link})


def show_chart(chart: Any, **kwargs: Any) -> None:
    """Draw a chart (a Vega-Lite spec or an Altair chart) with its axes', legends' and facets' words in the
    theme's label ink: Streamlit's chart theme draws them in one grey, under WCAG's 4.5:1 on a light page.
    The spec is copied, not changed: several are cached."""
    ink = INK[theme()]["label"]
    words = {"labelColor": ink, "titleColor": ink}
    if isinstance(chart, dict):
        config = dict(chart.get("config", {}))
        for part in ("axis", "legend", "header"):
            config[part] = {**words, **config.get(part, {})}
        st.vega_lite_chart({**chart, "config": config}, **kwargs)
    else:
        st.altair_chart(chart.configure_axis(**words).configure_legend(**words).configure_header(**words), **kwargs)


def show_numbers(frame, label: str = "The numbers behind the heatmap") -> None:
    """A heatmap's numbers under it, collapsed: exact values to read or copy, in an HTML table that a
    screen reader can read (the chart, and st.dataframe's canvas grid, expose no cells to one)."""
    with st.expander(label):
        # A phone shows no scrollbar, and the table's edge falls between two columns: key 4 looked last.
        phone_only_caption("A wide table scrolls sideways: swipe it for every column.", key="numbers")
        numbers_table(frame)


@st.cache_data(max_entries=64, show_spinner=False)
def numbers_table(frame) -> None:
    """The numbers as a table, to 3 decimals. Cached: st.cache_data replays the element a cached function
    drew, so a rerun does not style the same frame again."""
    st.table(frame.style.format("{:.3f}"))


def map_box(key: str, says: str, spec: dict, *beside: dict) -> DeltaGenerator:
    """A box for the heatmap ``spec`` (and those drawn ``beside`` it) under ``says``, a caption that the map
    scrolls sideways, shown only where it does: a container query on the box's own width (docs/layout.md). The map
    goes inside the box (``with box:``); ``key`` must be unique on the page."""
    box = st.container(key=f"map_box_{key}")
    if full_width(spec) > PHONE_COLUMN:  # a phone shows no scrollbar until the learner scrolls
        note = f".st-key-map_box_{key}_note"
        box.html(f"<style>.st-key-map_box_{key} {{ container-type: inline-size; }} @container (min-width: "
                 f"{scroll_width(spec)}px) {{ {with_wrapper(note)} {{ display: none; }} }}</style>")
        box.container(key=f"map_box_{key}_note").caption(says)
    elif scrolls_on_the_narrowest_phone(spec, *beside):
        with box:
            narrowest_only_caption(says, key=key)
    return box
