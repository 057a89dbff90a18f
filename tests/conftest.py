"""Every AppTest runs the entry script first, as the real server does (helpers: tests/support/apptest.py),
and every browser test drives one shared Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager

from ui.server.streamlit_internals import without_pages_dir


@pytest.fixture(autouse=True)
def navigation_not_pages_dir(monkeypatch):
    """Run the entry script on every AppTest run, as the real server does (see without_pages_dir)."""
    monkeypatch.setattr(PagesManager, "__init__", without_pages_dir(PagesManager.__init__))



@pytest.fixture(scope="session")
def chromium():
    """Debian's Chromium through pip's playwright (never `playwright install`), one for the whole session:
    Playwright's sync API runs one instance per thread, so the browser tests and the cluster tests share it."""
    from harness.server import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium); .ci/run does")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
