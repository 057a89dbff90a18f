"""Learners per replica: how many Chromium sessions, each pressing a slider key every 2 s, one replica
serves before its median key press -> new table time doubles against one session alone; then the same
through 3 replicas behind HAProxy on this machine (harness.cluster).

Each level K opens K sessions on the Explorer, each with its own N in the link, waits until every
table is on screen, then for ``--seconds`` each session presses the M slider's arrow key every 2 s (the
sessions' presses spread evenly over the 2 s) and times each press until its table shows the new shape.
Levels climb (``--levels``) until the median reaches twice the one-session median, or the ladder ends.

The sessions' Chromium runs on the same machine as the servers, and takes its share of the CPUs: the
figure is what one machine holds with its browsers, a floor for a server with its own cores. With
3 replicas on one 2-core machine there is no more CPU to share out: that run shows what the balancer
and the extra processes cost, not more capacity.

    python bench/cluster_capacity.py                       # one replica, then 3 behind HAProxy
    python bench/cluster_capacity.py --modes one --levels 1,4,8,16 --seconds 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the repo root holds harness/

from harness.cluster import Cluster  # noqa: E402
from harness.load import M_VALUES, shape_cell  # noqa: E402
from harness.server import CHROMIUM, CHROMIUM_ARGS, free_port  # noqa: E402

PERIOD = 2.0  # seconds between one session's key presses
WAIT_MS = 300_000  # a first page on a busy 2-core machine has taken over 2 minutes


async def open_session(browser, url: str, N: int):
    from playwright.async_api import expect

    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    await page.goto(f"{url}/?N={N}", timeout=WAIT_MS)
    await expect(shape_cell(page, 0)).to_have_text(f"({N}, 8)", timeout=WAIT_MS)
    await page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(timeout=WAIT_MS)
    return context, page


async def press_every_period(page, N: int, phase: float, until: float, times: list[float], misses: list[str]) -> None:
    """Press the M slider's arrow key every PERIOD seconds, starting ``phase`` in; time each to its table."""
    from playwright.async_api import expect

    thumb = page.locator('[data-testid="stSlider"]').filter(has_text="M — source length").get_by_role("slider")
    m_now, n = 8, 0
    start = time.monotonic() + phase
    while True:
        due = start + n * PERIOD
        if due >= until:
            return
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        key, step = ("ArrowRight", 1) if n % 2 == 0 else ("ArrowLeft", -1)
        target = M_VALUES[M_VALUES.index(m_now) + step]
        await thumb.focus()
        pressed = time.perf_counter()
        await thumb.press(key)
        try:
            await expect(shape_cell(page, 0)).to_have_text(f"({N}, {target})", timeout=WAIT_MS)
        except AssertionError:
            misses.append(f"N={N}: no ({N}, {target}) after {key}")
            return
        times.append(time.perf_counter() - pressed)
        m_now = target
        n += 1 + int((time.monotonic() - due) // PERIOD)  # a press slower than the period skips its missed turns


async def level(browser, url: str, sessions: int, seconds: float) -> dict:
    opened = await asyncio.gather(*(open_session(browser, url, i % 64 + 1) for i in range(sessions)))
    times: list[float] = []
    misses: list[str] = []
    until = time.monotonic() + seconds
    try:
        await asyncio.gather(*(press_every_period(page, i % 64 + 1, i * PERIOD / sessions, until, times, misses)
                               for i, (_, page) in enumerate(opened)))
    finally:
        for context, _ in opened:
            await context.close()
    return {"sessions": sessions, "presses": len(times), "misses": misses,
            "p50_ms": round(statistics.median(times) * 1e3, 1) if times else None,
            "p90_ms": round(statistics.quantiles(times, n=10)[-1] * 1e3, 1) if len(times) >= 10 else None}


async def climb(url: str, levels: list[int], seconds: float, label: str) -> dict:
    from playwright.async_api import async_playwright

    rows = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            await level(browser, url, 1, 4)  # warm the server(s): the first runs import and trace
            for k in levels:
                row = await level(browser, url, k, seconds)
                rows.append(row)
                base = rows[0]["p50_ms"]
                ratio = row["p50_ms"] / base if row["p50_ms"] and base else None
                row["ratio"] = round(ratio, 2) if ratio else None
                print(f"{label}: {k:3d} sessions: p50 {row['p50_ms']} ms, p90 {row['p90_ms']} ms, "
                      f"{row['presses']} presses, {len(row['misses'])} missed; {row['ratio']}x one session", flush=True)
                if ratio is not None and ratio >= 2 or row["misses"]:
                    break
        finally:
            await browser.close()
    under = [r["sessions"] for r in rows if r["ratio"] is not None and r["ratio"] < 2 and not r["misses"]]
    return {"mode": label, "rows": rows, "most_sessions_under_double": max(under) if under else None,
            "doubled_at": next((r["sessions"] for r in rows if r["ratio"] and r["ratio"] >= 2), None)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="one,three", help="one: a replica alone; three: 3 behind HAProxy")
    parser.add_argument("--levels", default="1,2,4,8,12,16,24,32", help="sessions at each step, from 1")
    parser.add_argument("--seconds", type=float, default=20, help="how long each level presses keys")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        levels = [int(v) for v in args.levels.split(",")]
    except ValueError:
        parser.error(f"--levels {args.levels!r} must be whole numbers separated by commas")
    modes = args.modes.split(",")
    if levels[0] != 1 or any(not 1 <= k <= 64 for k in levels) or not set(modes) <= {"one", "three"}:
        parser.error("--levels must start at 1 and stay within 1-64; --modes is one, three or both")
    results = []
    for mode in modes:
        with Cluster(1 if mode == "one" else 3, free_port(), Path(tempfile.mkdtemp(prefix="tse-capacity-"))) as cluster:
            # One replica is measured at the replica itself; three through the balancer, as a class reaches them.
            url = cluster.replicas[0].url if mode == "one" else cluster.url
            results.append(asyncio.run(climb(url, levels, args.seconds, mode)))
    if args.json:
        print(json.dumps(results, indent=2))
    for result in results:
        print(f"{result['mode']}: at most {result['most_sessions_under_double']} sessions before the median doubles "
              f"(doubled at {result['doubled_at']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
