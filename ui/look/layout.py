"""Page parts that CSS shows or hides by screen width, or keeps for a screen reader alone.

The server does not know the screen's width, so each part is a keyed container and CSS decides."""

from __future__ import annotations

import html

import streamlit as st

from ui.server.streamlit_internals import by_test_id


# A said sentence is out of sight and out of the page's flow, but still in the page for a screen reader.
_SAID_CSS = ('<style>div:has(> [class*="st-key-said_"]), [class*="st-key-said_"] { position: absolute; '
             "width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }</style>")


def announce(text: str, key: str) -> None:
    """Say ``text`` to a screen reader as soon as it appears, and show nothing: for an action whose answer is drawn
    further down the page (the quiz's Check) while focus stays on the button. Role "alert" is read out when added,
    so call this only on the run that answers the action. The text is escaped: no markup."""
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
    wrapper stays still takes a gap of its parent's, so whatever hides a box hides both. The wrapper has no key
    of its own: its test id is the only hook."""
    return f"{by_test_id('stLayoutWrapper')}:has(> {box}), {box}"


# The narrowest phones only (render.charts.NARROWEST_COLUMN); wider, the box goes with its wrapper, leaving no gap.
_NARROWEST_ONLY_CSS = ("<style>@media (min-width: 351px) { "
                       + with_wrapper('[class*="st-key-narrowest_only_"]') + " { display: none; } }</style>")


def narrowest_only_caption(text: str, key: str) -> None:
    """A caption shown on the narrowest phones only: for a map that fits a common phone's column
    (render.charts.PHONE_COLUMN) and scrolls sideways, out of sight, on the narrowest (docs/layout.md). ``key``
    must be unique on the page."""
    box = st.container(key=f"narrowest_only_{key}")  # the style inside it, so that it adds no gap of its own
    box.html(_NARROWEST_ONLY_CSS)
    box.caption(text)


# Streamlit starts the sidebar closed at its theme's "md" breakpoint or narrower; wider, the hint goes with its
# wrapper, leaving no gap.
_SIDEBAR_CLOSED_CSS = ("<style>@media (min-width: 769px) { " + with_wrapper(".st-key-sidebar_closed_hint")
                       + " { display: none; } }</style>")


def sidebar_closed_hint() -> None:
    """Where Streamlit starts the sidebar closed, say where it is: the page says "move a slider in the sidebar",
    and a phone shows no sidebar, only an unlabelled » in the corner."""
    hint = st.container(key="sidebar_closed_hint")  # the style inside it, so that it adds no gap of its own
    hint.html(_SIDEBAR_CLOSED_CSS)
    hint.caption(
        ":material/keyboard_double_arrow_right: The sliders are in the sidebar, closed on a screen this narrow: "
        "open it with » at the top left, and close it with « to see the page change.")
