"""AppTest helpers shared by the page tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")


@pytest.fixture(autouse=True)
def navigation_not_pages_dir(monkeypatch):
    """Run the entry script on every AppTest run, as the real server does.

    The design card names the page folder ``pages/``. Streamlit's legacy multipage mode keys on a
    folder of that name, and AppTest re-detects it before every run, so a rerun would execute the
    page file alone, without the entry script's sidebar. The real server switches the legacy mode
    off as soon as st.navigation runs (streamlit/commands/navigation.py); this does the same here.
    """
    monkeypatch.setattr(PagesManager, "__init__", without_pages_dir(PagesManager.__init__))


def without_pages_dir(original_init):
    """PagesManager.__init__ that then switches the legacy pages-folder mode off, as st.navigation does."""

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    return init


def make_app(query: dict[str, str] | None = None, timeout: float = 60) -> AppTest:
    """A fresh AppTest of the whole app (entry script, sidebar, navigation)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    if query:
        at.query_params.update(query)
    return at
