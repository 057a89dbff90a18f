"""Where a full page load's time goes, in the app and in bench/floor.py's floor app, side by side in one run.

Each server is started once; Chromium loads the root URL afresh in one tab per app (a new session each time,
the browser's cache warm), alternating app and floor --loads times, and the page itself notes the times
(performance.now(), from the navigation's start) of every websocket frame, of the frame in which the table's grid
is drawn and of the frame in which its first row shows in the page. Per load:

  page and connection   navigation to the browser's first frame to the server: the HTML, the JavaScript
                        bundle, the websocket (the same for both apps: Streamlit's own);
  server run            that frame to the run's last message (script_finished);
  browser, drawing      the last message to the table's first cell in the page, in two parts:
    the grid drawn      to the grid's canvas on screen, with its size (the table as a learner sees it);
    its cells           from then to the cells in the page, where the clock reads the table: glide-data-grid
                        (st.dataframe's grid) writes its accessibility table 200 ms after the grid's last change;
  runs, frames, bytes   script runs the load took (a second one would be a rerun), forward messages, bytes.

With --profile it also samples the renderer's main thread (V8's CPU profiler) over --profile more loads of each
and gives its time by script file: the element kinds whose code a load evaluates and runs. With --trace it records
Chromium's timeline over --trace more loads of each and sums the main thread's tasks from the run's first message
to the grid drawn: how much of that wait is the browser at work, and in how few long tasks.

    python bench/load_breakdown.py                  # 10 loads of each
    python bench/load_breakdown.py --loads 20 --profile 4 --trace 4
    python bench/load_breakdown.py --loads 12 --floor sidebar     # against the floor with the app's sidebar
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the repo root holds harness/ and bench/

from bench.breakdown import PAGE_CLOCK  # noqa: E402
from bench.floor import CELL_HAS_SHAPE, FIRST_CELL, FLOORS, IDLE  # noqa: E402
from bench.side_by_side import (  # noqa: E402
    NAMES, WAIT_MS, Tab, command_line, kinds_of, median_lines, profile_lines, renderer_main_events,
    side_by_side,
)

# The moment the table's grid is drawn: its canvas has a size.
GRID_CLOCK = PAGE_CLOCK + """
clock.grid = null;
(function grid() {
  const canvas = document.querySelector('[data-testid="stDataFrame"] canvas');
  if (canvas !== null && canvas.width > 0) {
    clock.grid = performance.now();
    performance.mark('grid');  // the same moment in Chromium's timeline
  } else requestAnimationFrame(grid);
})();
"""

STEPS = (("full load to the table (ms)", "total"), ("  page and connection (ms)", "connect"),
         ("  server run (ms)", "server"), ("  browser, drawing (ms)", "drawing"),
         ("    the grid drawn (ms)", "grid"), ("    its cells in the page (ms)", "cells"),
         ("script runs per load", "runs"), ("frames received", "frames"), ("bytes received", "bytes"))
TRACE_STEPS = (("  busy (ms)", "busy"), ("  in tasks of 20 ms or more (ms)", "long"),
               ("  tasks of 20 ms or more", "count"), ("  the longest task (ms)", "longest"))
LONG_MS = 20


def tasks_until_grid(path: Path, window_ms: float) -> dict[str, float]:
    """The renderer main thread's top-level tasks in the ``window_ms`` before the page's 'grid' mark."""
    on_main = renderer_main_events(path)
    end = next(e["ts"] for e in on_main if e.get("name") == "grid")
    start = end - window_ms * 1000
    tasks = [e["dur"] / 1000 for e in on_main if e.get("name") == "ThreadControllerImpl::RunTask"
             and e.get("ph") == "X" and start <= e["ts"] < end]
    long = [ms for ms in tasks if ms >= LONG_MS]
    return {"busy": sum(tasks), "long": sum(long), "count": len(long), "longest": max(tasks, default=0.0)}


@contextlib.asynccontextmanager
async def timeline(browser, page, path: Path):
    """Chromium's timeline of ``page`` recorded to ``path`` while the block runs."""
    await browser.start_tracing(page=page, path=str(path), categories=["toplevel", "blink.user_timing"])
    try:
        yield
    finally:
        await browser.stop_tracing()


class Loads(Tab):
    """One tab on one server: the loads' breakdowns, and the traced loads' main thread."""

    def __init__(self, name: str, page, url: str):
        super().__init__(name, page, url)
        self.traces: list[dict] = []

    async def open(self) -> None:
        """A full load of the root URL, to the table on screen and the run's end."""
        await self.page.goto(self.url)
        await self.page.wait_for_function(CELL_HAS_SHAPE, arg=FIRST_CELL, polling="raf", timeout=WAIT_MS)
        await self.page.wait_for_function(IDLE, timeout=WAIT_MS)

    async def settled_load(self, around=None) -> tuple[dict, list[bytes]]:
        """Settle, load afresh (inside ``around``, an async context such as a trace, when given), and return the
        page's clock and the frames the load received."""
        await self.settle()
        received_at = len(self.payloads)
        async with around or contextlib.nullcontext():
            await self.open()
            await self.page.wait_for_timeout(200)
        return await self.page.evaluate("clock"), self.payloads[received_at:]

    async def load(self) -> None:
        clock, payloads = await self.settled_load()
        kinds = kinds_of(payloads)
        arrived = [f for f in clock["frames"] if f[1] == "in"]
        sent = next(f[0] for f in clock["frames"] if f[1] == "out")
        finished = arrived[kinds.index("script_finished")][0] if "script_finished" in kinds else arrived[-1][0]
        shown = clock["cells"][0][0]
        drawn = clock["grid"] if clock["grid"] is not None else shown
        self.rows.append({"connect": sent, "server": finished - sent, "drawing": max(0.0, shown - finished),
                          "grid": max(0.0, drawn - finished), "cells": shown - max(drawn, finished),
                          "total": max(shown, finished), "runs": kinds.count("script_finished"),
                          "frames": len(payloads), "bytes": sum(map(len, payloads))})

    async def traced(self, browser, path: Path) -> None:
        """One more load under Chromium's timeline: the main thread's tasks from the run's first message to the grid
        drawn."""
        clock, _ = await self.settled_load(around=timeline(browser, self.page, path))
        first = next(f[0] for f in clock["frames"] if f[1] == "in")
        self.traces.append(tasks_until_grid(path, clock["grid"] - first))


async def run(args) -> dict[str, Loads]:
    async with side_by_side(Loads, GRID_CLOCK, "load-breakdown-", args.floor) as (browser, folder, tabs):
        for _ in range(args.loads):
            for name in NAMES:
                await tabs[name].load()
        for name in NAMES:
            for _ in range(args.profile):
                await tabs[name].profiled(tabs[name].open, args.profile)
            for i in range(args.trace):
                await tabs[name].traced(browser, folder / f"{name}-{i}-trace.json")
    return tabs


def report(tabs: dict[str, Loads], args, command: str) -> str:
    lines = [f"$ {command}", f"medians over {args.loads} full loads of each, alternating",
             *median_lines(tabs, STEPS, 34)]
    if args.profile:
        lines += profile_lines(tabs, f"renderer main thread per load (ms), V8's CPU profile over {args.profile} "
                                     "loads, by script:", args.top, 34)
    if args.trace:
        lines.append(f"renderer main thread from the run's first message to the grid drawn, Chromium's timeline, "
                     f"medians over {args.trace} loads:")
        for label, key in TRACE_STEPS:
            app, floor = (statistics.median(t[key] for t in tabs[n].traces) for n in NAMES)
            lines.append(f"{label:34}{app:>9.0f}{floor:>9.0f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=10, help="timed full loads of each app")
    parser.add_argument("--profile", type=int, default=0, help="loads of each sampled with V8's profiler (0: none)")
    parser.add_argument("--top", type=int, default=12, help="script files listed from the profile")
    parser.add_argument("--trace", type=int, default=0, help="loads of each under Chromium's timeline (0: none)")
    parser.add_argument("--floor", choices=sorted(FLOORS), default="trivial",
                        help="the floor app: the trivial one, or it with the app's sidebar (see bench/floor.py)")
    args = parser.parse_args(argv)
    if (not 1 <= args.loads <= 100 or not 0 <= args.profile <= 20 or not 1 <= args.top <= 50
            or not 0 <= args.trace <= 20):
        parser.error("--loads 1-100, --profile 0-20, --top 1-50, --trace 0-20")
    command = command_line("load_breakdown.py", sys.argv[1:] if argv is None else argv)
    print(report(asyncio.run(run(args)), args, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
