"""Re-exports harness.server for bench scripts, and keeps the AppTest pages-folder workaround.

``without_pages_dir`` stays here until it moves into the app's ui package; bench/app_rerun.py and
bench/page_latency.py use it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the repo root holds harness/

from harness.server import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_server, stop_server, wait_healthy  # noqa: E402

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "ROOT", "free_port", "start_server", "stop_server", "wait_healthy",
           "without_pages_dir"]


def without_pages_dir(original_init):
    """PagesManager.__init__ that then switches the legacy pages-folder mode off, as st.navigation does.

    The design card names the page folder ``pages/``. Streamlit's legacy multipage mode keys on a
    folder of that name, and AppTest re-detects it before every run, so a rerun would execute the
    page file alone, without the entry script's sidebar. The real server switches the legacy mode
    off as soon as st.navigation runs (streamlit/commands/navigation.py). Use:
    ``PagesManager.__init__ = without_pages_dir(PagesManager.__init__)``.
    """
    from streamlit.runtime.pages_manager import PagesManager

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    return init
