"""The app against the framework's floor, side by side and interleaved, in one run.

The floor is a trivial Streamlit app this script writes into a temporary folder: it imports torch, pandas and
altair, as the app does, shows the same M slider in its sidebar (same options) and two pages in its
navigation, the first a heading over a 14-row st.dataframe whose live shapes depend on M, the second a heading
over a small table. Each repeat starts a fresh `streamlit run` of the app and of the floor, one after the other
(alternating which goes first), keeps both running, and measures on each, alternating app and floor for every
single reading so that machine noise hits both alike:

  cold start      process start to the table's first row on screen in Chromium;
  RSS at rest     the server's VmRSS once that first page has loaded and sat idle --rest seconds;
  key press       ArrowRight on the sidebar's M slider to the table showing the new M, each press a new M;
  page switch     a click on a page in the sidebar's navigation to that page's heading (the app: the Explorer
                  and the Attention page in turn; the floor: its two pages in turn);
  page load       a full load of the root URL in the same tab (a new session, the browser's cache warm) to
                  the table's first row on screen and the run finished;
  frames          websocket frames and bytes the server sends for one key press (the forward messages);
  K sessions      peak VmRSS while --sessions browser sessions open the page and move M (0: skipped).

Reported: medians over every reading of every repeat, and the app against the floor as a ratio (times) or a
difference (memory), next to the issue's targets. With --floor sidebar the floor also draws the app's sidebar
(its page links, sliders, select box and checkbox, as a new session first shows them): the app against it is
what the app's pages and server work add to Streamlit's cost of those widgets.

    python bench/floor.py                          # 2 repeats of 10 presses, clicks and loads: 20 readings each
    python bench/floor.py --repeats 1 --readings 20 --sessions 8
    python bench/floor.py --repeats 3 --readings 20 --floor sidebar
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

FLOOR_PAGES = '''import altair  # noqa: F401
import pandas as pd
import streamlit as st
import torch  # noqa: F401

LENGTHS = list(range(1, 65)) + [96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]


def table():
    M = st.session_state.M
    N = 2
    rows = [(i + 1, f"tensor {i + 1}", f"({N}, {M})" if i == 0 else f"({N}, {M}, {i + 1})", "(N, M, ...)")
            for i in range(14)]
    st.title("Floor table")
    st.dataframe(pd.DataFrame(rows, columns=["#", "tensor", "live shape", "formula"]), hide_index=True)


def other():
    st.title("Floor other")
    st.dataframe(pd.DataFrame({"a": [1, 2, 3]}), hide_index=True)


PAGES = [st.Page(table, title="Table", url_path="table", default=True), st.Page(other, title="Other", url_path="other")]
'''

FLOOR_APP = '''"""The framework's floor: the app's imports, its M slider, two pages and a 14-row table, nothing else."""
''' + FLOOR_PAGES + '''
page = st.navigation(PAGES)
st.sidebar.select_slider("M — source length", LENGTHS, value=8, key="M")
page.run()
'''

# The app's sidebar as a new session first shows it, so that the app against it is its pages and server work alone.
SIDEBAR_FLOOR_APP = '''"""The floor with the app's sidebar: its links, sliders, select box and checkbox, then the table."""
''' + FLOOR_PAGES + '''
page = st.navigation(PAGES, position="hidden")
nav = st.sidebar.container(key="page_nav")
for i, title in enumerate(["Table", "Other", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth"]):
    nav.page_link(PAGES[i % 2], label=title, icon=":material/table_view:")
sb = st.sidebar
sb.header("Model sizes")
sb.selectbox("Preset", ["Default (M=8, E=16, nhead=2)", "GPT-2 small", "Llama-2-7B"], help="Start from a preset.")
sb.slider("N — batch size", 1, 64, 2)
sb.select_slider("M — source length", LENGTHS, value=8, key="M")
sb.select_slider("M_target — target length", LENGTHS, value=8, help="The decoder's length.")
sb.select_slider("E — embedding size (d_model)", [8, 16, 32, 64, 128], value=16)
sb.select_slider("nhead — attention heads", [1, 2, 4, 8, 16], value=2, help="nhead divides E.")
sb.caption("E = 16 splits evenly into nhead ∈ {1, 2, 4, 8, 16}; d_k = 8.")
sb.select_slider("vocab_size — vocabulary size", [10, 50, 100, 1000], value=100)
sb.slider("layers — encoder and decoder layers, each", 1, 96, 2)
sb.select_slider("d_ff — FFN hidden width (dim_feedforward)", [16, 32, 64, 128], value=64, help="Often 4E.")
sb.checkbox("tie_embeddings — one matrix for both embeddings and the output layer", help="Shares one matrix.")
sb.expander("Architecture")
sb.caption("encoder-decoder, post-norm, LayerNorm, ReLU, sinusoidal positions, MHA (nhead_kv = 2), biases")
page.run()
'''
FLOORS = {"trivial": FLOOR_APP, "sidebar": SIDEBAR_FLOOR_APP}

# name -> (the link to click, the heading it leads to), in the order the switches visit them
SWITCHES = {"app": [("Attention", "Attention"), ("Explorer", "Transformer Shape Explorer")],
            "floor": [("Other", "Floor other"), ("Table", "Floor table")]}

CELL_IS = """([css, want]) => { const e = document.querySelector(css); return e !== null && e.innerText === want; }"""
CELL_HAS_SHAPE = """css => { const e = document.querySelector(css); return e !== null && /^\\(\\d+, \\d+\\)$/.test(e.innerText); }"""
HEADING_IS = """want => [...document.querySelectorAll('h1')].some(h => h.innerText.trim() === want)"""
IDLE = ("() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state') "
        "=== 'notRunning'")


async def idle(page) -> None:
    """Wait until no script run is in progress: a key pressed into a run may land on a control about to be redrawn."""
    await page.wait_for_function(IDLE, timeout=WAIT_MS)


async def wait_until_run_done(page) -> None:
    """Idle, then a pause (not timed) so the redrawn page has settled before the next reading."""
    await idle(page)
    await page.wait_for_timeout(300)
    await idle(page)


async def open_table(page, url: str, started: float | None = None) -> float:
    """Open ``url`` (retrying while the server is not listening yet); seconds from ``started`` to the table's first row."""
    await goto_when_listening(page, url, time.monotonic() if started is None else started, limit_s=WAIT_MS / 1000)
    await page.wait_for_function(CELL_HAS_SHAPE, arg=FIRST_CELL, polling="raf", timeout=WAIT_MS)
    return time.monotonic() - started if started is not None else 0.0


class Session:
    """One browser tab on one server, with the readings taken on it and the frames it received."""

    def __init__(self, name: str, page, url: str):
        self.name, self.page, self.url = name, page, url
        self.received: list[int] = []
        self.presses: list[float] = []
        self.switches: list[float] = []
        self.loads: list[float] = []
        self.frames: list[tuple[int, int]] = []  # (frames, bytes) per key press
        self.switch_at = 0
        page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: self.received.append(len(payload))))

    async def m_now(self) -> int:
        return int((await self.page.locator(FIRST_CELL).inner_text()).strip("()").split(", ")[1])

    async def press(self, timed: bool = True) -> None:
        """ArrowRight on the M slider (ArrowLeft at the top): every press asks for an M not shown yet here."""
        m = await self.m_now()
        key, m = ("ArrowRight", m + 1) if m < 64 else ("ArrowLeft", m - 1)
        thumb = self.page.locator('[data-testid="stSlider"]').filter(has_text=M_LABEL).get_by_role("slider")
        await wait_until_run_done(self.page)
        await thumb.focus()
        before = len(self.received), sum(self.received)
        start = time.perf_counter()
        await thumb.press(key)
        await self.page.wait_for_function(CELL_IS, arg=[FIRST_CELL, f"(2, {m})"], polling="raf", timeout=WAIT_MS)
        elapsed = time.perf_counter() - start
        await idle(self.page)
        if timed:
            self.presses.append(elapsed)
            self.frames.append((len(self.received) - before[0], sum(self.received) - before[1]))

    async def switch(self) -> None:
        """Click the next page in the navigation; time to its heading. Ends back on the table's page when even."""
        link, heading = SWITCHES[self.name][self.switch_at % 2]
        self.switch_at += 1
        await wait_until_run_done(self.page)
        # The floor's is Streamlit's own navigation; the app draws its own (ui/sidebar/navigation.py).
        nav = self.page.locator('[data-testid="stSidebarNav"], .st-key-page_nav').get_by_text(link, exact=True)
        start = time.perf_counter()
        await nav.click()
        await self.page.wait_for_function(HEADING_IS, arg=heading, polling="raf", timeout=WAIT_MS)
        self.switches.append(time.perf_counter() - start)
        if link in ("Explorer", "Table"):  # back on the table's page: wait for its table before the next press
            await self.page.wait_for_function(CELL_HAS_SHAPE, arg=FIRST_CELL, polling="raf", timeout=WAIT_MS)

    async def load(self) -> None:
        """A full load of the root URL in this tab: a new session, to its table and the run's end."""
        await wait_until_run_done(self.page)
        start = time.perf_counter()
        await self.page.goto(self.url)
        await self.page.wait_for_function(CELL_HAS_SHAPE, arg=FIRST_CELL, polling="raf", timeout=WAIT_MS)
        await idle(self.page)
        self.loads.append(time.perf_counter() - start)


async def sessions_peak(browser, url: str, pid: int, sessions: int, moves: int) -> float:
    """Peak server RSS (MiB) while ``sessions`` browser sessions open the page and move M."""
    sampler = MemorySampler(pid, every=0.1)
    sampler.start()
    contexts = [await browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(sessions)]
    try:
        async def one(context):
            page = await context.new_page()
            await open_table(page, url)
            session = Session("any", page, url)
            for _ in range(moves):
                await session.press(timed=False)

        await asyncio.gather(*(one(c) for c in contexts))
    finally:
        sampler.stop()
        for context in contexts:
            await context.close()
    return max(v for _, v in sampler.samples) / MIB


async def one_repeat(browser, r: int, apps: dict, args, log_dir: Path) -> dict[str, dict]:
    """Start both servers afresh, take every reading, interleaved, and stop them."""
    order = ("app", "floor") if r % 2 == 0 else ("floor", "app")
    procs, sessions, contexts, result = {}, {}, [], {}
    try:
        for name in order:  # one at a time: a cold start should not share the CPUs with the other's
            script, cwd = apps[name]
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            context = await browser.new_context(viewport={"width": 1400, "height": 1000})
            contexts.append(context)
            page = await context.new_page()
            sessions[name] = Session(name, page, url)
            started = time.monotonic()
            procs[name] = start_server(port, log_dir / f"{name}-{port}.log", script=script, cwd=cwd)
            result[name] = {"cold": await open_table(page, url, started)}
            await idle(page)
        await asyncio.sleep(args.rest)
        for name in order:
            result[name]["rest"] = (rss_bytes(procs[name].pid) or 0) / MIB
        for name in order:
            await sessions[name].press(timed=False)  # untimed: the first press of a session
        for _ in range(args.readings):
            for name in order:
                await sessions[name].press()
        for _ in range(args.readings):
            for name in order:
                await sessions[name].switch()
        for _ in range(args.readings):
            for name in order:
                await sessions[name].load()
        for context in contexts:
            await context.close()
        contexts = []
        for name in order:
            s = sessions[name]
            result[name].update(presses=s.presses, switches=s.switches, loads=s.loads, frames=s.frames)
            result[name]["peak"] = (await sessions_peak(browser, s.url, procs[name].pid, args.sessions, 3)
                                    if args.sessions else None)
    finally:
        for context in contexts:
            await context.close()
        for proc in procs.values():
            stop_server(proc)
    return result


async def run(args) -> dict[str, list[dict]]:
    from playwright.async_api import async_playwright

    results: dict[str, list[dict]] = {"app": [], "floor": []}
    with tempfile.TemporaryDirectory(prefix="floor-") as tmp:
        folder = Path(tmp)
        (folder / "floor_app.py").write_text(FLOORS[args.floor])
        apps = {"app": ("streamlit_app.py", ROOT), "floor": ("floor_app.py", folder)}
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for r in range(args.repeats):
                    result = await one_repeat(browser, r, apps, args, folder)
                    for name in ("app", "floor"):
                        results[name].append(result[name])
                        one = result[name]
                        print(f"repeat {r + 1} {name:>5}: cold {one['cold']:.2f} s, rest {one['rest']:.0f} MiB, "
                              f"key press {statistics.median(one['presses']) * 1e3:.0f} ms, "
                              f"switch {statistics.median(one['switches']) * 1e3:.0f} ms, "
                              f"load {statistics.median(one['loads']) * 1e3:.0f} ms", file=sys.stderr, flush=True)
            finally:
                await browser.close()
    return results


def table(results: dict[str, list[dict]], args, command: str) -> str:
    def every(name: str, key: str) -> list:
        return [v for r in results[name] for v in r[key]]

    def median(name: str, key: str) -> float:
        if key in ("presses", "switches", "loads"):
            return statistics.median(every(name, key)) * 1e3
        if key in ("frames", "bytes"):
            return statistics.median(f[0 if key == "frames" else 1] for f in every(name, "frames"))
        return statistics.median(r[key] for r in results[name])

    rows = [("key press to new table (ms)", "presses", "ratio", "<= 1.3x", 0),
            ("page switch to its heading (ms)", "switches", "ratio", "<= 1.5x", 0),
            ("full page load (ms)", "loads", "ratio", "<= 1.5x", 0),
            ("cold start to table (s)", "cold", "ratio", "<= 1.4x", 2),
            ("server RSS at rest (MiB)", "rest", "diff", "-", 0),
            ("frames sent for a key press", "frames", "ratio", "-", 0),
            ("bytes sent for a key press", "bytes", "ratio", "-", 0)]
    if args.sessions:
        rows.append((f"peak RSS, {args.sessions} sessions (MiB)", "peak", "diff", "-", 0))
    n = args.repeats * args.readings
    lines = [f"$ {command}",
             f"{args.repeats} repeat(s), fresh servers, app and floor interleaved; medians over {n} key presses, "
             f"{n} page switches, {n} page loads; {os.cpu_count()} CPUs",
             f"{'':36}{'app':>9}{'floor':>9}{'app vs floor':>15}{'target':>10}"]
    for label, key, kind, target, digits in rows:
        app, floor = median("app", key), median("floor", key)
        versus = f"{app / floor:.2f}x" if kind == "ratio" else f"{app - floor:+.0f} MiB"
        target = target if args.floor == "trivial" else "-"  # the targets are set against the trivial floor
        lines.append(f"{label:36}{app:>9.{digits}f}{floor:>9.{digits}f}{versus:>15}{target:>10}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="fresh servers of each")
    parser.add_argument("--readings", type=int, default=10,
                        help="timed key presses, page switches and page loads per repeat, each")
    parser.add_argument("--sessions", type=int, default=0, help="browser sessions for the peak RSS (0: skip)")
    parser.add_argument("--rest", type=float, default=3.0, help="idle seconds before RSS at rest is read")
    parser.add_argument("--floor", choices=sorted(FLOORS), default="trivial",
                        help="the floor app: the trivial one the targets name, or it with the app's sidebar")
    args = parser.parse_args(argv)
    if not 1 <= args.repeats <= 50 or not 1 <= args.readings <= 100 or not 0 <= args.sessions <= 64:
        parser.error("--repeats 1-50, --readings 1-100, --sessions 0-64")
    command = "python bench/floor.py " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    print(table(asyncio.run(run(args)), args, command.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
