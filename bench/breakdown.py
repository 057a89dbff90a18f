"""Where a key press's time goes, in the app and in bench/floor.py's floor app, side by side in one run.

Each server is started once; Chromium presses ArrowRight on the sidebar's M slider --presses times on each,
alternating, and the page itself notes the times (performance.now()) of the key down, of every websocket frame
sent and received, and of the frame in which the table first shows the new M. Per press:

  browser, before sending   key down to the browser's first frame to the server (the widget's own delay);
  server run                that frame to the run's last message (script_finished): the script's time on the
                            server, with loopback's delivery;
  browser, drawing          the last message to the new table on screen (when the table comes first: 0);
  frames, bytes             the forward messages of the run, and their size; the largest kinds by bytes.

With --trace it also records Chromium's performance timeline over the presses and sums the renderer main
thread's busy time by kind (scripting, style and layout, paint) per press.

    python bench/breakdown.py                  # 20 presses on each
    python bench/breakdown.py --presses 10 --trace
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the repo root holds harness/ and bench/

from bench.floor import FIRST_CELL, IDLE, M_LABEL  # noqa: E402
from bench.side_by_side import (  # noqa: E402
    NAMES, WAIT_MS, WEBSOCKET_FRAMES, Tab, command_line, kinds_of, median_lines, renderer_main_events, side_by_side,
)

# Installed before the app's own scripts: the times of every key down, websocket frame and the table's text.
PAGE_CLOCK = ("window.clock = {keys: [], frames: [], cells: []};\n"
              "addEventListener('keydown', () => clock.keys.push(performance.now()), true);\n" + WEBSOCKET_FRAMES + """
(function watch() {
  const e = document.querySelector('%s');
  const text = e === null ? null : e.innerText;
  if (text !== null && clock.cells[clock.cells.length - 1]?.[1] !== text) clock.cells.push([performance.now(), text]);
  requestAnimationFrame(watch);
})();
""" % FIRST_CELL.replace("'", "\\'"))

STEPS = (("key press to new table (ms)", "total"), ("  browser, before sending (ms)", "before"),
         ("  server run (ms)", "server"), ("  browser, drawing (ms)", "drawing"),
         ("frames received", "frames"), ("bytes received", "bytes"))


class Presses(Tab):
    """One tab on one server: the presses' breakdowns, and the bytes received by kind of message."""

    def __init__(self, name: str, page, url: str):
        super().__init__(name, page, url)
        self.by_kind: collections.Counter = collections.Counter()

    async def press(self) -> None:
        page = self.page
        m = int((await page.locator(FIRST_CELL).inner_text()).strip("()").split(", ")[1])
        key, m = ("ArrowRight", m + 1) if m < 64 else ("ArrowLeft", m - 1)
        await self.settle()
        thumb = page.locator('[data-testid="stSlider"]').filter(has_text=M_LABEL).get_by_role("slider")
        await thumb.focus()
        clock_at = await page.evaluate("[clock.keys.length, clock.frames.length]")
        received_at = len(self.payloads)
        await thumb.press(key)
        await page.wait_for_function("([css, want]) => document.querySelector(css)?.innerText === want",
                                     arg=[FIRST_CELL, f"(2, {m})"], polling="raf", timeout=WAIT_MS)
        await page.wait_for_function(IDLE, timeout=WAIT_MS)
        await page.wait_for_timeout(200)
        clock = await page.evaluate("clock")
        key_down = clock["keys"][clock_at[0]]
        frames = clock["frames"][clock_at[1]:]
        payloads = self.payloads[received_at:]
        kinds = kinds_of(payloads)
        arrived = [f for f in frames if f[1] == "in"]
        sent = next(f[0] for f in frames if f[1] == "out")
        finished = arrived[kinds.index("script_finished")][0] if "script_finished" in kinds else arrived[-1][0]
        shown = next(t for t, text in clock["cells"] if t > key_down and text == f"(2, {m})")
        for kind, payload in zip(kinds, payloads):
            self.by_kind[kind] += len(payload)
        self.rows.append({"before": sent - key_down, "server": finished - sent, "drawing": max(0.0, shown - finished),
                          "total": shown - key_down, "frames": len(payloads), "bytes": sum(map(len, payloads))})


def main_thread_busy(path: Path, presses: int) -> dict[str, float]:
    """Milliseconds per press of the renderer main thread's top-level work, by kind."""
    kinds = {"scripting": ("FunctionCall", "EvaluateScript", "v8.evaluateModule", "TimerFire", "FireAnimationFrame",
                           "EventDispatch", "MinorGC", "MajorGC"),
             "style and layout": ("UpdateLayoutTree", "Layout"),
             "paint": ("Paint", "PrePaint", "Commit", "Layerize")}
    busy = dict.fromkeys(kinds, 0.0)
    for e in renderer_main_events(path):
        if e.get("ph") == "X":
            for kind, names in kinds.items():
                if e["name"] in names:
                    busy[kind] += e.get("dur", 0) / 1000 / presses
    return busy


async def run(args) -> dict:
    out: dict = {}
    async with side_by_side(Presses, PAGE_CLOCK, "breakdown-") as (browser, folder, tabs):
        for name in NAMES:  # untimed: the first press of a session
            await tabs[name].press()
            tabs[name].rows.clear()
            tabs[name].by_kind.clear()
        for _ in range(args.presses):
            for name in NAMES:
                await tabs[name].press()
        if args.trace:
            for name in NAMES:
                path = folder / f"{name}-trace.json"
                await browser.start_tracing(page=tabs[name].page, path=str(path),
                                            categories=["devtools.timeline", "v8.execute"])
                for _ in range(5):
                    await tabs[name].press()
                await browser.stop_tracing()
                out[f"{name}-busy"] = main_thread_busy(path, 5)
    return {**out, **tabs}


def report(out: dict, args, command: str) -> str:
    lines = [f"$ {command}", f"medians over {args.presses} key presses on each, alternating",
             *median_lines(out, STEPS, 34)]
    for name in NAMES:
        total = sum(out[name].by_kind.values())
        top = ", ".join(f"{k} {v / total:.0%}" for k, v in out[name].by_kind.most_common(6))
        lines.append(f"{name} bytes by kind: {top}")
    if args.trace:
        lines.append("renderer main thread per press (ms), Chromium's timeline over 5 presses:")
        for kind in out["app-busy"]:
            lines.append(f"  {kind:32}{out['app-busy'][kind]:>9.0f}{out['floor-busy'][kind]:>9.0f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=20, help="timed key presses on each app")
    parser.add_argument("--trace", action="store_true", help="also sum Chromium's timeline over 5 more presses")
    args = parser.parse_args(argv)
    if not 1 <= args.presses <= 100:
        parser.error("--presses 1-100")
    command = command_line("breakdown.py", sys.argv[1:] if argv is None else argv)
    print(report(asyncio.run(run(args)), args, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
