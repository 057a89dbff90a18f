"""Positional encoding: the M x E table as a heatmap, a few dimensions as curves, and the
sinusoidal and learned kinds side by side.

core.views builds capped tables (at most MAX_POSITIONS positions and MAX_DIMS dimensions drawn),
so no slider position makes this page allocate more than a few megabytes.
"""

import streamlit as st

from core import estimate, human_bytes
from core.views import (MAX_CURVE_POSITIONS, MAX_DIMS, MAX_POSITIONS, most_alike_pair, pair_step, positional_view,
                        sinusoid_curves)
from render.charts import (COLUMN_MAX, curves_spec, full_width, positional_spec,
                          scrolls_on_the_narrowest_phone, similarity_spec, zero_vectors_caption)
from render.tables import numbers_frame
from ui.charts import drawn_at_this_link, map_box, show_chart, show_numbers
from ui.guard import guard
from ui.layout import narrowest_only_caption
from ui.page_links import MAX_CURVES, POSITIONAL_TABS, curve_dims
from ui.streamlit_internals import leave_legacy_pages_mode
from ui.sidebar import current_config, forget_link_warnings
from ui.traces import cached_trace, config_over_budget

leave_legacy_pages_mode()  # before anything is drawn: see ui/streamlit_internals.py

KINDS = ("sinusoidal", "learned")


@st.cache_data(max_entries=64, show_spinner=False)
def _view(cfg, kind: str):
    # The traced model's own learned table is used when it exists; otherwise core seeds one.
    t = None
    if kind == "learned" and cfg.positional == "learned" and not config_over_budget(cfg):
        t = cached_trace(cfg)
    return positional_view(cfg, kind, t)


@st.cache_data(max_entries=64, show_spinner=False)
def _curves(E: int, dims: tuple[int, ...], positions: int):
    return sinusoid_curves(E, list(dims), positions)


def sinusoid_words(E: int) -> str:
    """How the table's dimensions vary, as far as it holds at this E. The slow right-hand pair exists
    from E = 4 (its angle turns 10000^(-2/4) = 0.01 radians a position); at E = 2 the one cosine
    turns a radian a position (1, 0.54, -0.42, -0.99), and E = 1 has no cosine at all."""
    if E == 1:
        return " Its one dimension holds sin(p): E = 1 leaves no room for a cosine."
    words = " Dimension 2i holds sin(p / 10000^(2i/E)) and dimension 2i + 1 its cosine"
    if E < 4:
        return words + "."
    return (words + ": the left dimensions change fast from row to row, the right ones so slowly that over a "
            "few positions they stay near 0 (sine) and 1 (cosine).")


def curves_words(E: int) -> str:
    """The curves tab's formula and what it makes of the dimensions, as far as it holds at this E:
    "low dimensions turn fast, high ones slowly" needs two frequencies at least (E >= 3)."""
    formula = "Sinusoidal encoding: PE[p, 2i] = sin(p / 10000^(2i/E)), PE[p, 2i+1] = cos(same angle)."
    if E == 1:
        return formula + " At E = 1 only PE[p, 0] = sin(p) is left: no cosine, and no slower frequency."
    if E == 2:
        return (formula + " At E = 2 that is one frequency, sin(p) and cos(p), both turning a radian a position: "
                "nothing turns slowly.")
    return formula + (" Low dimensions turn fast, high ones slowly, so together they give each position a unique "
                      "pattern.")


def sinusoid_likeness_words(E: int) -> str:
    """What the sinusoidal similarity map shows. At E = 1 a position is one number, sin(p), and two
    one-number vectors score +1 or -1 by their signs alone (neighbours 3 and 4 score -1, positions
    1 and 7 score +1), so "sinusoids make nearby positions alike" did not hold there."""
    if E == 1:
        return ("At E = 1 a sinusoidal position is one number, sin(p), so any two positions other than 0 (whose "
                "sin 0 = 0 has no direction) score +1 (their sines share a sign) or -1: nearness does not show; ")
    return ("Sinusoids make nearby positions alike, and the likeness tends to fall with distance (not steadily: "
            "at small E some far positions come back close); ")


def learned_likeness_words(v, E: int) -> str:
    """What a random learned table's similarity map shows, read off the map (``v``): random vectors
    are alike only by chance, which in few dimensions is often (at E = 2 two positions can score
    1.00), so "only each position with itself is alike" was false there."""
    most = most_alike_pair(v)
    if most is None:  # one position: no pair to compare
        return "an untrained learned table is random, so its positions are alike only by chance."
    return (f"an untrained learned table is random, so its positions are alike only by chance, which in few "
            f"dimensions is often and in many rare: here, at E = {E}, the most alike two different positions "
            f"score {most:.2f}.")


cfg = current_config()
st.title("Positional encoding")
st.caption(f"Attention without a mask treats its input as a set and cannot tell positions apart (a causal mask "
           f"lets a model infer some order on its own), so each position p gets a vector of E = {cfg.E} "
           f"numbers added to its token embedding. This model uses **{cfg.positional}** positions.")

# This page needs no pass, so it asks the estimate, not a trace, whether the other pages' is shape-only.
if config_over_budget(cfg):
    # Not the other pages' shape-only banner ("no values were computed"): this page needs no pass.
    st.info(f"A real pass of this model would need about {human_bytes(estimate(cfg).total)}, so the other "
            "pages trace it shape-only. This page needs no pass: the sinusoidal table comes from its formula, "
            "and a learned one is seeded here at this size, so every number below is computed.",
            icon=":material/straighten:")
views = {}
with guard("Building the positional tables"):
    views = {kind: _view(cfg, kind) for kind in KINDS}
    v = views[cfg.positional]
    notes = []
    if v.positions < cfg.M:
        notes.append(f"the first {v.positions} of M = {cfg.M} positions")
    if len(v.dims) < cfg.E:
        step = pair_step(cfg.E)
        notes.append(f"the sine and cosine (dimensions 2i and 2i + 1) of one frequency in {step}, "
                     f"{len(v.dims)} of E = {cfg.E} dimensions")
    if notes:
        st.caption(f"Drawn: {' and '.join(notes)} (capped at {MAX_POSITIONS} × {MAX_DIMS} cells so large sizes "
                   "stay fast).")

# The sidebar has put the tab and the curves' dimensions in the URL (tab=curves&dims=0,1,30,31:
# ui.page_links) and read them from a link; the tabs keep their state (a key and on_change) for that.
tab_table, tab_curves, tab_compare = st.tabs(list(POSITIONAL_TABS), key="p_tab", on_change=forget_link_warnings)
with tab_table, guard("The table heatmap"):
    v = views[cfg.positional]
    # "Computed from the formula" with the formula two tabs away left the stripes unexplained: why
    # the right-hand columns barely change is the first thing a newcomer asks of this heatmap.
    formula = "" if cfg.positional != "sinusoidal" else sinusoid_words(cfg.E)
    st.caption(f"{cfg.positional.capitalize()}: {v.note}. Row p is added to the token at position p; the "
               f"same rows serve every sequence in the batch.{formula}")
    spec = positional_spec(v)
    # At the default E = 16 the map is wider than a phone's column and scrolls there with no scrollbar
    # in sight: its colour scale, the one key to what red and blue mean, was off screen and unsaid.
    scrolls = ("On a screen narrower than the map, the map scrolls sideways inside its box: its last dimensions "
               "and its colour scale are on the right.")
    with map_box("table", scrolls, spec):  # E = 9: 298 px drawn in a 320 px phone's 288, said there only
        show_chart(drawn_at_this_link(spec), width="content")
    show_numbers(numbers_frame(v.table, [f"position {p}" for p in range(v.positions)], [f"dim {d}" for d in v.dims]))

with tab_curves, guard("The curves"):
    st.caption(curves_words(cfg.E))
    # Each E keeps its own choice (its key), first a fast, a middle and a slow pair (page_links.default_dims).
    chosen = st.multiselect("dimensions", curve_dims(cfg.E), max_selections=MAX_CURVES, key=f"p_dims_{cfg.E}",
                            persist_state="session", on_change=forget_link_warnings)
    positions = min(max(cfg.M, 100), MAX_CURVE_POSITIONS)
    if chosen:
        show_chart(curves_spec(_curves(cfg.E, tuple(chosen), positions)), width="stretch")
        st.caption(f"Positions 0 to {positions - 1}: the sinusoids are defined for any position, beyond M too. "
                   "A learned table has only max_len rows and nothing past them.")
    else:  # empty axes with a legend's title and no word on why
        most = min(MAX_CURVES, len(curve_dims(cfg.E)))  # E = 4 has 4 dimensions to pick, not 8
        st.info(f"No dimension is chosen, so there is no curve to draw: pick up to {most} in the box above.")

with tab_compare, guard("The comparison"):
    st.caption("Each kind's table, and beside it (below it, on a narrow screen) the cosine similarity between "
               "positions. " + sinusoid_likeness_words(cfg.E) + learned_likeness_words(views["learned"], cfg.E)
               + " Training is what gives a learned table its structure.")
    maps = {kind: (positional_spec(views[kind], most=COLUMN_MAX), similarity_spec(views[kind], most=COLUMN_MAX))
            for kind in KINDS}
    # Drawn for two to a row on a laptop, each fits a 360 px phone's column; on a 320 px phone's even the
    # default E's tables scroll, their colour scales past the screen's edge, so a caption says so.
    if scrolls_on_the_narrowest_phone(*(spec for pair in maps.values() for spec in pair)):
        narrowest_only_caption("On a screen this narrow, a map wider than the screen scrolls sideways inside its "
                               "box: its colour scale is on the right.", key="compare")
    for kind in KINDS:
        v = views[kind]
        st.markdown(f"**{kind.capitalize()}**: {v.note}")
        table, similarity = maps[kind]
        row = st.container(horizontal=True, wrap=True, gap="large")  # two to a row where they fit
        with row.container(width=full_width(table)):
            show_chart(drawn_at_this_link(table), width="content")
        with row.container(width=full_width(similarity)):
            show_chart(drawn_at_this_link(similarity), width="content")
        if v.zero_positions:  # E = 1: sinusoidal position 0 is [sin 0] = [0], alike with nothing, itself too
            st.caption(zero_vectors_caption(v, cfg.E))
