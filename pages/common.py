"""What every page shares besides the sidebar (pages.sidebar): the cached trace, and the small pieces of page
that several pages draw (charts in the theme's ink, captions for a phone, a part's failure shown in place).

Data flows one way: the sidebar's TransformerConfig -> core.trace, cached here by config -> plain values for
the pages. Nothing in this module does tensor maths.
"""

from __future__ import annotations

import dataclasses
import html
import re
import traceback
from contextlib import contextmanager
from typing import Any, Iterator

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core import DEFAULT_BUDGET_BYTES, Trace, TransformerConfig, estimate, human_bytes, trace
from core.slim import MAX_SLIM_DRAWS, slim_estimate
from pages.charts import PHONE_COLUMN, full_width, scroll_width, scrolls_on_the_narrowest_phone
from pages.tables import INK
from pages.trace_cache import shared_trace


def _leave_legacy_pages_mode() -> None:
    """Make the server run the entry script even on a session's very first run.

    Streamlit treats a folder named ``pages/`` as its old multipage mode until some run calls
    st.navigation: a first visit to /explorer would run pages/explorer.py alone (no sidebar) and
    list every module in pages/ as a page. Every page imports this module, so on that first run
    we switch the old mode off, as st.navigation itself does, and rerun through the entry script.
    """
    if PagesManager.uses_pages_directory and get_script_run_ctx() is not None:
        PagesManager.uses_pages_directory = False
        st.rerun()


_leave_legacy_pages_mode()


def as_literal(text: str) -> str:
    """Text that Markdown shows as it is: every ASCII punctuation mark escaped. A link's values are
    quoted in its warning, and ``E=[x](http://…)`` or ``E=$x$`` would otherwise be a link or a formula.
    (A bare web address still becomes a link, by Streamlit's own rule, but one that shows where it goes.)"""
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", text)


def drawn_at_this_link(chart: Any) -> Any:
    """A chart (a spec, or an Altair chart) that the browser draws afresh whenever the page's link changes:
    for every chart with a colour scale.

    Vega's SVG names a colour scale's gradient by the page's whole address as it was when the chart
    was drawn (url(http://…/positional?…&tab=table#gradient_1); vega/vega#3948). A link changed since
    (a tab, a slider, a choice: _write_url) left that name pointing at another page, and Chromium
    drew no gradient: the positional page's Compare tab showed all four colour scales blank, their
    numbers beside empty space. The link, put in the spec's ``usermeta`` (which Vega ignores), makes a
    new link a new spec, which Streamlit draws afresh; the link is written before any chart is sent.
    """
    link = "&".join(f"{k}={v}" for k, v in st.query_params.to_dict().items())
    if isinstance(chart, dict):
        chart["usermeta"] = {**chart.get("usermeta", {}), "link": link}
        return chart
    meta = chart.usermeta if isinstance(chart.usermeta, dict) else {}
    return chart.properties(usermeta={**meta, "link": link})


def show_chart(chart: Any, **kwargs: Any) -> None:
    """Draw a chart (a Vega-Lite spec or an Altair chart) with its axes', legends' and facets' words in the
    theme's label ink. Streamlit's chart theme draws them #808495 on a light page, whatever the app's
    theme: 3.72:1 against white (axe-core), under WCAG's 4.5:1, for the numbers a learner reads a chart
    by. INK's label reads at 5.33:1 there and at 7.17:1 on the dark page. The spec is copied, not changed:
    several are cached."""
    ink = INK[theme()]["label"]
    words = {"labelColor": ink, "titleColor": ink}
    if isinstance(chart, dict):
        config = dict(chart.get("config", {}))
        for part in ("axis", "legend", "header"):
            config[part] = {**words, **config.get(part, {})}
        st.vega_lite_chart({**chart, "config": config}, **kwargs)
    else:
        st.altair_chart(chart.configure_axis(**words).configure_legend(**words).configure_header(**words), **kwargs)


def theme() -> str:
    """"light" or "dark": the theme the learner's browser shows, for the few colours a chart draws
    straight onto the page (pages.tables.INK). Streamlit infers it from the page's background and
    sends it with each run; without it (AppTest, or a browser that has not said) the light one."""
    return said_theme() or "light"


def said_theme() -> str | None:
    """The theme the browser has told the server, or None before it has (see ``theme``)."""
    kind = getattr(st.context.theme, "type", None)
    return kind if kind in ("light", "dark") else None


# The explorer's table needs shapes only. Up to this size it reads them off a real pass (a few
# tens of ms); above it, off the same code on the meta device, so a slider move stays fast.
LIVE_TABLE_BYTES = 32 * 2**20


def cached_trace(cfg: TransformerConfig) -> Trace:
    """One trace per config, shared by all sessions; treat it (and its tensors) as read-only.

    Sharing is safe because a Trace is frozen, its tensors were made under inference mode (an
    in-place change raises) and no page does tensor maths; core.views cuts what pages draw.
    Memory stays bounded for the whole process: see pages/trace_cache.py.
    """
    return shared_trace(cfg)  # no st.* call here: cached functions (cached_shapes) call this


@st.cache_data(max_entries=64, show_spinner=False)
def cached_shapes(cfg: TransformerConfig) -> Trace:
    """A trace without tensor values, for pages that only show shapes, counts and bytes.

    Small configs: the real pass (shapes read off live tensors). Larger ones: the same forward
    code on the meta device, which gives identical shapes in milliseconds. ``over_budget`` tells
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
    needs no pass: a shape-only trace of 96+96 layers took 0.7 s only to be asked this. Every trace
    the pages get that is over it has core's default budget (the gate's, for the rest, is the same)."""
    return estimate(cfg).over(DEFAULT_BUDGET_BYTES)


# The parts of a slim pass (core.slim.SlimEstimate) and the sliders that shrink each most.
_SLIM_PARTS = {
    "tables": ("its token table", "vocab_size and E"),
    "layer": ("one decoder layer's weights", "E and d_ff"),
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


def show_numbers(frame, label: str = "The numbers behind the heatmap") -> None:
    """A heatmap's numbers under it, collapsed: exact values to read or copy, in an HTML table that a
    screen reader can read (the chart, and st.dataframe's canvas grid, expose no cells to one)."""
    with st.expander(label):
        # A phone shows no scrollbar, and the table's edge falls between two columns: key 4 looked last.
        phone_only_caption("A wide table scrolls sideways: swipe it for every column.", key="numbers")
        numbers_table(frame)


@st.cache_data(max_entries=64, show_spinner=False)
def numbers_table(frame) -> None:
    """The numbers as a table, to 3 decimals. Cached, so that a rerun replays the element Streamlit
    built for these numbers before (st.cache_data replays the elements a cached function drew):
    building it from a pandas Styler took 0.15-0.25 s on every rerun at 64 x 64 cells."""
    st.table(frame.style.format("{:.3f}"))


# A said sentence's box, and the wrapper Streamlit puts around it: out of sight and out of the
# page's flow (an absolute box takes no gap in its column; the wrapper took 16 px), but still in
# the page, where a screen reader reads it.
_SAID_CSS = ('<style>div:has(> [class*="st-key-said_"]), [class*="st-key-said_"] { position: absolute; '
             "width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }</style>")


def announce(text: str, key: str) -> None:
    """Say ``text`` to a screen reader as soon as it appears, and show nothing.

    For an action whose answer is drawn further down the page (the quiz's Check): focus stays on
    the button, and a learner who cannot see the page heard nothing at all. An element with role
    "alert" is read out when it is added, so call this only on the run that answers the action.
    The text is escaped: the page's own words only, never markup.
    """
    with st.container(key=f"said_{key}"):
        st.html(f'{_SAID_CSS}<div role="alert">{html.escape(text)}</div>')


# CSS decides what is for a phone only, as the server does not know the screen's width.
_PHONE_ONLY_CSS = '<style>@media (min-width: 641px) { [class*="st-key-phone_only_"] { display: none; } }</style>'


def phone_only_caption(text: str, key: str) -> None:
    """A caption shown on a screen 640 px wide or less only: there a wide table or grid scrolls
    sideways with no scrollbar in sight until it is touched. ``key`` must be unique on the page."""
    st.html(_PHONE_ONLY_CSS)
    st.container(key=f"phone_only_{key}").caption(text)


def with_wrapper(box: str) -> str:
    """A CSS selector for the keyed box ``box`` and for the wrapper Streamlit may put round it: a hidden box whose
    wrapper stays still takes a gap of its parent's, so whatever hides a box hides both."""
    return f'[data-testid="stLayoutWrapper"]:has(> {box}), {box}'


# The narrowest phones (an iPhone SE's 320 px screen; its main column is 288 px, pages.charts.NARROWEST_COLUMN)
# only. Wider, the wrapper Streamlit may put round the box goes too, so that it leaves no gap.
_NARROWEST_ONLY_CSS = ("<style>@media (min-width: 351px) { "
                       + with_wrapper('[class*="st-key-narrowest_only_"]') + " { display: none; } }</style>")


def narrowest_only_caption(text: str, key: str) -> None:
    """A caption shown on a screen 350 px wide or less only: for a map that fits the column of a 360 px
    phone (pages.charts.PHONE_COLUMN) and scrolls sideways on a 320 px one, out of sight. ``key`` must be
    unique on the page."""
    box = st.container(key=f"narrowest_only_{key}")  # the style inside it, so that it adds no gap of its own
    box.html(_NARROWEST_ONLY_CSS)
    box.caption(text)


def map_box(key: str, says: str, spec: dict, *beside: dict) -> DeltaGenerator:
    """A box for the heatmap ``spec`` (and the ones drawn ``beside`` it), and above them ``says``, a caption that
    the map scrolls sideways, shown only where it does. The map goes inside the box (``with box:``); ``key``
    must be unique on the page.

    A map wider than a 360 px phone's column (pages.charts.PHONE_COLUMN) scrolls wherever the box is narrower
    than it. The caption used to show for such a map everywhere, on a laptop too, where it fits with room to
    spare. Now the box is a CSS size container, and a container query, which asks the box's own width, hides
    the caption under pages.charts.scroll_width (and its wrapper with it, so that it leaves no gap). A map that
    fits that column but not a 320 px phone's gets narrowest_only_caption, measured for that case."""
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


# Streamlit starts the sidebar closed on a window 768 px wide or less (its theme's "md" breakpoint). Wider,
# the hint's wrapper goes too: hidden, the hint alone left the page a gap taller than the hint's absence.
_SIDEBAR_CLOSED_CSS = ("<style>@media (min-width: 769px) { " + with_wrapper(".st-key-sidebar_closed_hint")
                       + " { display: none; } }</style>")


def sidebar_closed_hint() -> None:
    """Where Streamlit starts the sidebar closed, say where it is: the page says "move a slider in the
    sidebar", and on a phone a newcomer saw no sidebar, only an unlabelled » in the corner."""
    hint = st.container(key="sidebar_closed_hint")  # the style inside it, so that it adds no gap of its own
    hint.html(_SIDEBAR_CLOSED_CSS)
    hint.caption(
        ":material/keyboard_double_arrow_right: The sliders are in the sidebar, closed on a screen this narrow: "
        "open it with » at the top left, and close it with « to see the page change.")


@contextmanager
def guard(what: str) -> Iterator[None]:
    """Show a failure in one part of a page as a short error; the rest of the page still renders."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - a page must survive any one failing part
        st.error(f"{what} failed: {exc}")
        with st.expander("Details"):
            st.code("".join(traceback.format_exception(exc)), language="text")
