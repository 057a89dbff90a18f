"""The app against the framework's floor, side by side and interleaved, in one run.

The floor is a trivial Streamlit app this script writes into a temporary folder: it imports torch,
pandas and altair, as the app does, and shows the same M slider in its sidebar (same options) over a
14-row st.dataframe whose live shapes depend on M. Importing torch does not change the floor's key
press (a rerun finds it imported), so one floor app serves every comparison. Each repeat starts a
fresh `streamlit run` of the app and of the floor, in alternating order, and on each measures:

  cold start      process start to the table's first row on screen in Chromium;
  RSS at rest     the server's VmRSS once that first page has loaded and sat idle --rest seconds;
  key press       ArrowRight on the sidebar's M slider to the table showing the new M, each press
                  a new M (one untimed press first, then --moves timed ones);
  K sessions      peak VmRSS while --sessions browser sessions open the page and move M --moves times.

Reported: medians over repeats (over every press, for the key press), and the app against the floor
as a ratio (times) or a difference (memory), next to the issue's targets.

    python bench/floor.py                      # 5 repeats, 8 sessions
    python bench/floor.py --repeats 3 --sessions 4 --moves 6
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the repo root holds harness/

from harness.load import MemorySampler, rss_bytes  # noqa: E402
from harness.server import (  # noqa: E402
    CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, goto_when_listening, start_server, stop_server,
)

WAIT_MS = 120_000
MIB = 2**20
M_LABEL = "M — source length"
FIRST_CELL = '[data-testid="stDataFrame"] [data-testid="glide-cell-2-0"]'  # the live shape of row 1: (N, M)

FLOOR_APP = '''"""The framework's floor: the app's imports, its M slider and a 14-row table, nothing else."""
import altair  # noqa: F401
import pandas as pd
import streamlit as st
import torch  # noqa: F401

LENGTHS = list(range(1, 65)) + [96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]
M = st.sidebar.select_slider("M — source length", LENGTHS, value=8, key="M")
N = 2
rows = [(i + 1, f"tensor {i + 1}", f"({N}, {M})" if i == 0 else f"({N}, {M}, {i + 1})", "(N, M, ...)")
        for i in range(14)]
st.dataframe(pd.DataFrame(rows, columns=["#", "tensor", "live shape", "formula"]), hide_index=True)
'''

CELL_IS = """([css, want]) => { const e = document.querySelector(css); return e !== null && e.innerText === want; }"""
CELL_HAS_SHAPE = """css => { const e = document.querySelector(css); return e !== null && /^\\(\\d+, \\d+\\)$/.test(e.innerText); }"""


async def idle(page) -> None:
    """Wait until no script run is in progress: a key pressed into a run may land on a control about to be redrawn."""
    await page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state') === 'notRunning'",
        timeout=WAIT_MS)


async def open_table(page, url: str, started: float | None = None) -> float:
    """Open ``url`` (retrying while the server is not listening yet); seconds from ``started`` to the table's first row."""
    await goto_when_listening(page, url, time.monotonic() if started is None else started, limit_s=WAIT_MS / 1000)
    await page.wait_for_function(CELL_HAS_SHAPE, arg=FIRST_CELL, polling="raf", timeout=WAIT_MS)
    return time.monotonic() - started if started is not None else 0.0


async def key_presses(page, moves: int) -> list[float]:
    """Seconds from each key press on the M slider to the table showing the new M; the first press untimed.

    Always one step up (down only at the top), so that every press asks for an M this server has not
    shown yet: the app's trace cache cannot answer it."""
    thumb = page.locator('[data-testid="stSlider"]').filter(has_text=M_LABEL).get_by_role("slider")
    m = int((await page.locator(FIRST_CELL).inner_text()).strip("()").split(", ")[1])
    timings = []
    for i in range(moves + 1):
        key, m = ("ArrowRight", m + 1) if m < 64 else ("ArrowLeft", m - 1)
        await idle(page)
        await page.wait_for_timeout(200)  # let the redrawn page settle; not timed
        await thumb.focus()
        start = time.perf_counter()
        await thumb.press(key)
        await page.wait_for_function(CELL_IS, arg=[FIRST_CELL, f"(2, {m})"], polling="raf", timeout=WAIT_MS)
        if i:
            timings.append(time.perf_counter() - start)
    return timings


async def sessions_peak(browser, url: str, pid: int, sessions: int, moves: int) -> float:
    """Peak server RSS (MiB) while ``sessions`` browser sessions open the page and move M."""
    sampler = MemorySampler(pid, every=0.1)
    sampler.start()
    contexts = [await browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(sessions)]
    try:
        async def one(context):
            page = await context.new_page()
            await open_table(page, url)
            await key_presses(page, moves)

        await asyncio.gather(*(one(c) for c in contexts))
    finally:
        sampler.stop()
        for context in contexts:
            await context.close()
    return max(v for _, v in sampler.samples) / MIB


async def one_server(browser, name: str, script: str, cwd: Path, args, log_dir: Path) -> dict:
    """Start one fresh server of ``script`` and take every measurement on it."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    started = time.monotonic()
    proc = start_server(port, log_dir / f"{name}-{port}.log", script=script, cwd=cwd)
    try:
        cold = await open_table(page, url, started)
        await idle(page)
        await asyncio.sleep(args.rest)
        rest = (rss_bytes(proc.pid) or 0) / MIB
        presses = await key_presses(page, args.moves)
        await context.close()
        peak = await sessions_peak(browser, url, proc.pid, args.sessions, args.moves) if args.sessions else None
    finally:
        stop_server(proc)
    return {"cold": cold, "rest": rest, "presses": presses, "peak": peak}


async def run(args) -> dict[str, list[dict]]:
    from playwright.async_api import async_playwright

    results: dict[str, list[dict]] = {"app": [], "floor": []}
    with tempfile.TemporaryDirectory(prefix="floor-") as tmp:
        folder = Path(tmp)
        (folder / "floor_app.py").write_text(FLOOR_APP)
        apps = {"app": ("streamlit_app.py", ROOT), "floor": ("floor_app.py", folder)}
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for r in range(args.repeats):
                    for name in (("app", "floor") if r % 2 == 0 else ("floor", "app")):
                        script, cwd = apps[name]
                        result = await one_server(browser, name, script, cwd, args, folder)
                        results[name].append(result)
                        print(f"repeat {r + 1} {name:>5}: cold {result['cold']:.2f} s, rest {result['rest']:.0f} MiB, "
                              f"key press {statistics.median(result['presses']) * 1e3:.0f} ms, "
                              f"peak {result['peak'] or 0:.0f} MiB", file=sys.stderr, flush=True)
            finally:
                await browser.close()
    return results


def table(results: dict[str, list[dict]], args, command: str) -> str:
    def median(name: str, key: str) -> float:
        if key == "presses":
            return statistics.median(p for r in results[name] for p in r["presses"]) * 1e3
        return statistics.median(r[key] for r in results[name])

    rows = [("key press to new table (ms)", "presses", "ratio", "<= 1.3x"),
            ("cold start to table (s)", "cold", "ratio", "<= 1.4x"),
            ("server RSS at rest (MiB)", "rest", "diff", "<= +50 MiB")]
    if args.sessions:
        rows.append((f"peak RSS, {args.sessions} sessions (MiB)", "peak", "diff", "-"))
    lines = [f"$ {command}",
             f"medians of {args.repeats} repeats, interleaved; key press over {args.moves} presses a repeat; "
             f"{os.cpu_count()} CPUs",
             f"{'':34}{'app':>9}{'floor':>9}{'app vs floor':>15}{'target':>12}"]
    for label, key, kind, target in rows:
        app, floor = median("app", key), median("floor", key)
        versus = f"{app / floor:.2f}x" if kind == "ratio" else f"{app - floor:+.0f} MiB"
        digits = 2 if key == "cold" else 0
        lines.append(f"{label:34}{app:>9.{digits}f}{floor:>9.{digits}f}{versus:>15}{target:>12}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="fresh servers of each, in alternating order")
    parser.add_argument("--moves", type=int, default=5, help="timed key presses per server and per session")
    parser.add_argument("--sessions", type=int, default=8, help="browser sessions for the peak RSS (0: skip)")
    parser.add_argument("--rest", type=float, default=3.0, help="idle seconds before RSS at rest is read")
    args = parser.parse_args(argv)
    if not 1 <= args.repeats <= 50 or not 1 <= args.moves <= 50 or not 0 <= args.sessions <= 64:
        parser.error("--repeats 1-50, --moves 1-50, --sessions 0-64")
    command = "python bench/floor.py " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    print(table(asyncio.run(run(args)), args, command.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
