"""Where a full page load's time goes, in the app and in bench/floor.py's floor app, side by side in one run.

Each server is started once; Chromium loads the root URL afresh in one tab per app (a new session each time,
the browser's cache warm), alternating app and floor --loads times, and the page itself notes the times
(performance.now(), from the navigation's start) of every websocket frame and of the frame in which the table's
first row shows. Per load:

  page and connection   navigation to the browser's first frame to the server: the HTML, the JavaScript
                        bundle, the websocket (the same for both apps: Streamlit's own);
  server run            that frame to the run's last message (script_finished);
  browser, drawing      the last message to the table on screen;
  runs, frames, bytes   script runs the load took (a second one would be a rerun), forward messages, bytes.

With --profile it also samples the renderer's main thread (V8's CPU profiler) over --profile more loads of each
and gives its time by script file: the element kinds whose code a load evaluates and runs.

    python bench/load_breakdown.py                  # 10 loads of each
    python bench/load_breakdown.py --loads 20 --profile 4
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the repo root holds harness/ and bench/

from bench.breakdown import PAGE_CLOCK, kinds_of  # noqa: E402
from bench.floor import CELL_HAS_SHAPE, FIRST_CELL, FLOOR_APP, IDLE, open_table  # noqa: E402
from harness.server import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_server, stop_server  # noqa: E402

WAIT_MS = 120_000


class Loads:
    """One tab on one server: the loads' breakdowns, and the renderer's time by script file."""

    def __init__(self, page, url: str):
        self.page, self.url = page, url
        self.payloads: list[bytes] = []
        self.rows: list[dict] = []
        self.by_file: collections.Counter = collections.Counter()
        page.on("websocket", lambda ws: ws.on("framereceived", lambda p: self.payloads.append(
            p if isinstance(p, bytes) else p.encode())))

    async def load(self) -> None:
        page = self.page
        await page.wait_for_function(IDLE, timeout=WAIT_MS)
        await page.wait_for_timeout(300)
        received_at = len(self.payloads)
        await page.goto(self.url)
        await page.wait_for_function(CELL_HAS_SHAPE, arg=FIRST_CELL, polling="raf", timeout=WAIT_MS)
        await page.wait_for_function(IDLE, timeout=WAIT_MS)
        await page.wait_for_timeout(200)
        clock = await page.evaluate("clock")
        payloads = self.payloads[received_at:]
        kinds = kinds_of(payloads)
        arrived = [f for f in clock["frames"] if f[1] == "in"]
        sent = next(f[0] for f in clock["frames"] if f[1] == "out")
        finished = arrived[kinds.index("script_finished")][0] if "script_finished" in kinds else arrived[-1][0]
        shown = clock["cells"][0][0]
        self.rows.append({"connect": sent, "server": finished - sent, "drawing": max(0.0, shown - finished),
                          "total": max(shown, finished), "runs": kinds.count("script_finished"),
                          "frames": len(payloads), "bytes": sum(map(len, payloads))})

    async def profile(self, loads: int) -> None:
        """V8's CPU profile of the renderer over ``loads`` loads: sampled milliseconds by script file."""
        for _ in range(loads):
            cdp = await self.page.context.new_cdp_session(self.page)
            await cdp.send("Profiler.enable")
            await cdp.send("Profiler.setSamplingInterval", {"interval": 500})
            await cdp.send("Profiler.start")
            await self.page.goto(self.url)
            await self.page.wait_for_function(CELL_HAS_SHAPE, arg=FIRST_CELL, polling="raf", timeout=WAIT_MS)
            await self.page.wait_for_function(IDLE, timeout=WAIT_MS)
            profile = (await cdp.send("Profiler.stop"))["profile"]
            await cdp.detach()
            nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
            for sample, delta in zip(profile["samples"], profile["timeDeltas"]):
                frame = nodes[sample]
                name = frame["url"].rsplit("/", 1)[-1] or f"({frame['functionName']})"
                self.by_file[name] += delta / 1000 / loads


async def run(args) -> dict[str, Loads]:
    from playwright.async_api import async_playwright

    tabs: dict[str, Loads] = {}
    with tempfile.TemporaryDirectory(prefix="load-breakdown-") as tmp:
        folder = Path(tmp)
        (folder / "floor_app.py").write_text(FLOOR_APP)
        apps = {"app": ("streamlit_app.py", ROOT), "floor": ("floor_app.py", folder)}
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            procs = {}
            try:
                for name, (script, cwd) in apps.items():
                    port = free_port()
                    url = f"http://127.0.0.1:{port}"
                    procs[name] = start_server(port, folder / f"{name}.log", script=script, cwd=cwd)
                    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
                    page = await context.new_page()
                    await page.add_init_script(PAGE_CLOCK)
                    tabs[name] = Loads(page, url)
                    await open_table(page, url, time.monotonic())
                for _ in range(args.loads):
                    for name in apps:
                        await tabs[name].load()
                if args.profile:
                    for name in apps:
                        await tabs[name].profile(args.profile)
            finally:
                await browser.close()
                for proc in procs.values():
                    stop_server(proc)
    return tabs


def report(tabs: dict[str, Loads], args, command: str) -> str:
    lines = [f"$ {command}", f"medians over {args.loads} full loads of each, alternating",
             f"{'':34}{'app':>9}{'floor':>9}"]
    for label, key in (("full load to the table (ms)", "total"), ("  page and connection (ms)", "connect"),
                       ("  server run (ms)", "server"), ("  browser, drawing (ms)", "drawing"),
                       ("script runs per load", "runs"), ("frames received", "frames"), ("bytes received", "bytes")):
        app, floor = (statistics.median(r[key] for r in tabs[n].rows) for n in ("app", "floor"))
        lines.append(f"{label:34}{app:>9.0f}{floor:>9.0f}")
    if args.profile:
        lines.append(f"renderer main thread per load (ms), V8's CPU profile over {args.profile} loads, by script:")
        names = [n for n, _ in tabs["app"].by_file.most_common(args.top)]
        for name in names:
            lines.append(f"  {name[:32]:32}{tabs['app'].by_file[name]:>9.0f}{tabs['floor'].by_file[name]:>9.0f}")
        lines.append(f"  {'all sampled':32}{sum(tabs['app'].by_file.values()):>9.0f}"
                     f"{sum(tabs['floor'].by_file.values()):>9.0f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=10, help="timed full loads of each app")
    parser.add_argument("--profile", type=int, default=0, help="loads of each sampled with V8's profiler (0: none)")
    parser.add_argument("--top", type=int, default=12, help="script files listed from the profile")
    args = parser.parse_args(argv)
    if not 1 <= args.loads <= 100 or not 0 <= args.profile <= 20 or not 1 <= args.top <= 50:
        parser.error("--loads 1-100, --profile 0-20, --top 1-50")
    given = argv if argv is not None else sys.argv[1:]
    command = "python bench/load_breakdown.py " + " ".join(shlex.quote(a) for a in given)
    print(report(asyncio.run(run(args)), args, command.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
