"""The page navigation, drawn at the top of the sidebar: one link a page, each carrying the config.

Streamlit clears the query on a page switch, and the session keeps the config across it. A session that
starts with a page switch has nothing to keep: a tab whose server went away (a restart, a replica taken
down) reconnects to a new session on its next action. The links carry the link of the target page, so a
page switch reproduces the config there too.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from ui.link import link_query
from ui.link.config import config_values
from ui.sections.your_text import text_link_values
from ui.sidebar.config import Run


def draw_navigation(container, pages: Sequence, run: Run) -> None:
    """A link to each page in ``container``, with the query that reproduces this run's config there."""
    values = config_values(run.sliders)
    for page in pages:
        query = link_query(run.cfg, values, page.url_path, st.session_state, text_link_values(page.url_path))
        container.page_link(page, query_params=query)
