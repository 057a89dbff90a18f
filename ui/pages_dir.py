"""Streamlit's legacy pages-folder mode, switched off: the one module that touches Streamlit's private
``PagesManager.uses_pages_directory``.

The product's card names the page folder ``pages/``, and Streamlit still reads a folder of that name
beside the entry script as its old multipage mode until st.navigation runs: the page script alone, with
no sidebar. No public setting turns that off, so this module does what st.navigation itself does.
tests/app/test_pages_dir.py fails as soon as Streamlit changes what this relies on.
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx


def leave_legacy_pages_mode() -> None:
    """Called by every page script: on a server's very first run a link to /attention runs that page
    alone, so switch the old mode off and rerun through the entry script (streamlit_app.py)."""
    if PagesManager.uses_pages_directory and get_script_run_ctx() is not None:
        PagesManager.uses_pages_directory = False
        st.rerun()


def without_pages_dir(original_init: Callable[..., None]) -> Callable[..., None]:
    """``PagesManager.__init__`` that then switches the old mode off, for an in-process AppTest.

    AppTest detects the folder again before every run, so each run would execute the page alone and
    rerun; the real server detects it once. Use in a test or bench:
    ``monkeypatch.setattr(PagesManager, "__init__", without_pages_dir(PagesManager.__init__))``.
    """
    def init(self: PagesManager, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    return init
