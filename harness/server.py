"""The app started as a learner starts it, on a free loopback port, and Debian's Chromium to open it.

The one place the server is started, for the browser tests, the load test and the bench scripts,
so all of them run the same server the same way: `streamlit run <script>`, headless, bound to
127.0.0.1, without usage statistics or a file watcher. Chromium is the system one
(/usr/bin/chromium, from apt); nothing is downloaded.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    """A loopback port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int, log_path: Path, script: str = "streamlit_app.py", cwd: Path = ROOT,
                 env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start `streamlit run <script>` from ``cwd`` on ``port``; its output goes to ``log_path``. ``env``
    adds to the environment (a replica's shared cookie secret, say)."""
    env = dict(os.environ, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false", STREAMLIT_SERVER_FILE_WATCHER_TYPE="none",
               **(env or {}))
    cmd = [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1"]
    with open(log_path, "w") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float) -> None:
    """Return once the server answers its health check; raise if it exits or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"streamlit did not answer at {url} within {timeout} s")


async def goto_when_listening(page, url: str, started: float, limit_s: float) -> None:
    """Open ``url`` in a Playwright ``page``, retrying while the server is not listening yet; give up
    ``limit_s`` seconds after ``started`` (a time.monotonic() reading)."""
    while True:
        try:
            await page.goto(url, timeout=5_000)
            return
        except Exception:  # noqa: BLE001 - not listening yet
            if time.monotonic() - started > limit_s:
                raise
            await asyncio.sleep(0.05)


def stop_server(proc: subprocess.Popen) -> None:
    """Terminate, and kill if it has not ended within 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
