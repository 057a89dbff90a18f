"""The one module that reaches into Streamlit's undocumented runtime, for three things no public API does.

- The legacy pages-folder mode, switched off. The product's card names the page folder ``pages/``, and
  Streamlit still reads a folder of that name beside the entry script as its old multipage mode until
  st.navigation runs: the page script alone, with no sidebar. This does what st.navigation itself does.
- Whether the browser's Back or Forward started a run (the sidebar's undo).
- Whether a session is still connected, asked from a training run's own thread.
- The test ids (and one label) of Streamlit's elements that the app's CSS and JavaScript select where no
  ``key`` class reaches the element.

tests/ui/server/test_streamlit_internals.py fails as soon as Streamlit changes what these rely on.
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st
from streamlit import runtime
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx

TEST_IDS = ("stApp", "stHeader", "stCode", "stSliderThumbValue", "stCaptionContainer", "stLayoutWrapper",
            "stElementToolbar", "stFullScreenFrame")
CLOSE_FULLSCREEN = '[aria-label="Close fullscreen"]'  # the fullscreen frame's close button: open, not closed


def by_test_id(name: str) -> str:
    """A CSS selector for Streamlit's element whose ``data-testid`` is ``name``, one of TEST_IDS."""
    if name not in TEST_IDS:
        raise ValueError(f"{name!r} is not one of the test ids the app relies on: {', '.join(TEST_IDS)}")
    return f'[data-testid="{name}"]'


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


def history_navigation() -> bool:
    """True when the browser's Back or Forward button started this run (the run's context says so)."""
    return bool(getattr(get_script_run_ctx(), "is_history_navigation", False))


def session_alive() -> Callable[[], bool] | None:
    """A check, safe to call from any thread, that the current session is still connected.

    Streamlit keeps a closed tab's session for a while in case it reconnects, but no longer counts
    it as active. None outside a served app (the check would have nothing to ask).
    """
    ctx = get_script_run_ctx()
    if ctx is None or not runtime.exists():
        return None
    session_id, server = ctx.session_id, runtime.get_instance()  # taken now, on the script's thread
    return lambda: bool(server.is_active_session(session_id))
