"""Every AppTest here runs the entry script first, as the real server does (helpers: tests/support/apptest.py)."""

from __future__ import annotations

import threading

import pytest
from streamlit.runtime.pages_manager import PagesManager

from ui.streamlit_internals import without_pages_dir


@pytest.fixture(autouse=True)
def navigation_not_pages_dir(monkeypatch):
    """Run the entry script on every AppTest run, as the real server does (see without_pages_dir)."""
    monkeypatch.setattr(PagesManager, "__init__", without_pages_dir(PagesManager.__init__))


@pytest.fixture(autouse=True, scope="session")
def shape_warm_up_ended():
    """Let the server's background shape warm-up (ui/warm_up.py) end before the test process does: a process
    that exits while that thread is still inside PyTorch aborts, and the run would fail after passing."""
    yield
    for thread in threading.enumerate():
        if thread.name == "shape-warm-up":
            thread.join()
