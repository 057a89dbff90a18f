"""A real Streamlit server on a free loopback port and Debian's Chromium driven by Playwright.

The server (harness/server.py, which the load test and bench/ share) runs ``streamlit run
streamlit_app.py`` exactly as a learner would, headless, bound to 127.0.0.1, and is stopped in
``finally`` whatever the tests do. Chromium is the system one (/usr/bin/chromium, installed by apt);
nothing is downloaded.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.server import free_port, start_server, stop_server, wait_healthy
from tests.support.browser import page_in

START_TIMEOUT = 60  # seconds for the server to answer its health check


@contextmanager
def running_app(log_dir: Path):
    """Start the app on a free loopback port; yield its URL; always stop it."""
    port = free_port()
    log_path = log_dir / "streamlit.log"
    proc = start_server(port, log_path)
    try:
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, proc, START_TIMEOUT)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}; server log:\n{log_path.read_text()[-3000:]}") from None
        yield url
    finally:
        stop_server(proc)


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    """One server for the whole session, as a class shares one."""
    with running_app(tmp_path_factory.mktemp("server")) as url:
        yield url


@pytest.fixture
def fresh_app_url(tmp_path):
    """A server of its own that has run nothing yet, for what only a first run can show."""
    with running_app(tmp_path) as url:
        yield url


class RestartableApp:
    """The app on a loopback port of its own that a test can restart: a tab open on it reconnects to the new
    process and a new session, as a tab does to another replica when its own restarts behind a balancer."""

    def __init__(self, log_dir: Path):
        self.port, self.log_dir, self.starts = free_port(), log_dir, 0
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def start(self) -> None:
        self.starts += 1
        log_path = self.log_dir / f"streamlit-{self.starts}.log"
        self.proc = start_server(self.port, log_path)
        try:
            wait_healthy(self.url, self.proc, START_TIMEOUT)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}; server log:\n{log_path.read_text()[-3000:]}") from None

    def restart(self) -> None:
        stop_server(self.proc)
        self.start()


@pytest.fixture
def restartable_app(tmp_path):
    app = RestartableApp(tmp_path)
    try:
        app.start()
        yield app
    finally:
        if app.proc is not None:
            stop_server(app.proc)


@pytest.fixture(scope="session")
def browser(chromium):
    return chromium


@pytest.fixture
def page(browser):
    """Wide enough for the sidebar and the whole table."""
    with page_in(browser, 1400, 1000) as p:
        yield p


@pytest.fixture
def laptop(browser):
    """A common laptop screen, 1280 x 800, with the sidebar open."""
    with page_in(browser, 1280, 800) as p:
        yield p


@pytest.fixture
def phone(browser):
    """A phone's screen, 360 px wide, the narrowest in common use: Streamlit hides the sidebar and stacks
    columns."""
    with page_in(browser, 360, 740) as p:
        yield p
