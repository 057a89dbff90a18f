"""The theme the learner's browser shows, for the colours a chart draws straight onto the page."""

from __future__ import annotations

import streamlit as st


def theme() -> str:
    """"light" or "dark": the theme the learner's browser shows, for the few colours a chart draws
    straight onto the page (render.palette.INK). Streamlit infers it from the page's background and
    sends it with each run; without it (AppTest, or a browser that has not said) the light one."""
    return said_theme() or "light"


def said_theme() -> str | None:
    """The theme the browser has told the server, or None before it has (see ``theme``)."""
    kind = getattr(st.context.theme, "type", None)
    return kind if kind in ("light", "dark") else None
