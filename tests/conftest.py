"""Every AppTest runs the entry script first, as the real server does (helpers: tests/support/apptest.py)."""

from __future__ import annotations

import pytest
from streamlit.runtime.pages_manager import PagesManager

from ui.streamlit_internals import without_pages_dir


@pytest.fixture(autouse=True)
def navigation_not_pages_dir(monkeypatch):
    """Run the entry script on every AppTest run, as the real server does (see without_pages_dir)."""
    monkeypatch.setattr(PagesManager, "__init__", without_pages_dir(PagesManager.__init__))

