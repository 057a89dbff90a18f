"""The load run, short: K=4 browser sessions against a real server, no errors, no shared state.

Marked slow (it starts a server and four Chromium sessions for ~30 s); .ci/run runs it with the
rest. Memory and latency figures are printed, not asserted: timings on a shared machine are noise.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness import load
from harness.server import CHROMIUM

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_four_sessions_for_a_short_while():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
    # Its own thread: the browser tests' sync Playwright keeps an event loop running in this one.
    with ThreadPoolExecutor(max_workers=1) as pool:
        result = pool.submit(asyncio.run, load.run_load(sessions=4, seconds=30, moves=3, answers=1)).result()
    print(load.report(result))
    assert result["errors"] == []
    assert result["leaks"] == []
    assert result["rerun_count"] >= 4  # every session moved a slider and saw its own table change
    assert result["quiz_answers"] >= 4  # and had its own score count its own answer
    assert result["trainings_finished"] + result["trainings_turned_away_busy"] >= 4
    assert result["rss_peak_mib"] is not None and result["cold_start_seconds"] > 0
