"""The app server and Chromium for bench scripts run as `python bench/<script>.py`: harness.server, re-exported."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the repo root holds harness/

from harness.server import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_server, stop_server, wait_healthy  # noqa: E402

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "ROOT", "free_port", "start_server", "stop_server", "wait_healthy"]
