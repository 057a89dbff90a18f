"""AppTest helpers shared by the page tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

from ui.pages_dir import without_pages_dir

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")


@pytest.fixture(autouse=True)
def navigation_not_pages_dir(monkeypatch):
    """Run the entry script on every AppTest run, as the real server does (see without_pages_dir)."""
    monkeypatch.setattr(PagesManager, "__init__", without_pages_dir(PagesManager.__init__))


def make_app(query: dict[str, str] | None = None, timeout: float = 60) -> AppTest:
    """A fresh AppTest of the whole app (entry script, sidebar, navigation)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    if query:
        at.query_params.update(query)
    return at


def open_page(page: str, query: dict[str, str]) -> AppTest:
    """The app opened on a link to one of its pages, as a browser opens /positional?...."""
    at = make_app(query)
    at.switch_page(f"pages/{page}.py")
    return at.run()
