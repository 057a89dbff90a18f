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
import json
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the repo root holds harness/ and bench/

from bench.floor import FIRST_CELL, FLOOR_APP, IDLE, M_LABEL, open_table  # noqa: E402
from harness.server import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_server, stop_server  # noqa: E402

WAIT_MS = 120_000

# Installed before the app's own scripts: the times of every key down, websocket frame and the table's text.
PAGE_CLOCK = """
window.clock = {keys: [], frames: [], cells: []};
addEventListener('keydown', () => clock.keys.push(performance.now()), true);
const Native = window.WebSocket;
window.WebSocket = function (...args) {
  const ws = new Native(...args);
  ws.addEventListener('message', e => clock.frames.push([performance.now(), 'in', e.data.byteLength || e.data.length]));
  const send = ws.send.bind(ws);
  ws.send = data => { clock.frames.push([performance.now(), 'out', data.byteLength || data.length]); send(data); };
  return ws;
};
window.WebSocket.prototype = Native.prototype;
Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
(function watch() {
  const e = document.querySelector('%s');
  const text = e === null ? null : e.innerText;
  if (text !== null && clock.cells[clock.cells.length - 1]?.[1] !== text) clock.cells.push([performance.now(), text]);
  requestAnimationFrame(watch);
})();
""" % FIRST_CELL.replace("'", "\\'")


def kinds_of(payloads: list[bytes]) -> list[str]:
    """Each forward message's kind: an element's type for a delta, the message's type otherwise."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    kinds = []
    for payload in payloads:
        msg = ForwardMsg()
        msg.ParseFromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "delta":
            delta = msg.delta.WhichOneof("type")
            kind = msg.delta.new_element.WhichOneof("type") if delta == "new_element" else delta
        kinds.append(kind)
    return kinds


class Presses:
    """One tab on one server: the presses' breakdowns."""

    def __init__(self, page):
        self.page = page
        self.payloads: list[bytes] = []
        self.rows: list[dict] = []
        self.by_kind: collections.Counter = collections.Counter()
        page.on("websocket", lambda ws: ws.on("framereceived", lambda p: self.payloads.append(
            p if isinstance(p, bytes) else p.encode())))

    async def press(self) -> None:
        page = self.page
        m = int((await page.locator(FIRST_CELL).inner_text()).strip("()").split(", ")[1])
        key, m = ("ArrowRight", m + 1) if m < 64 else ("ArrowLeft", m - 1)
        await page.wait_for_function(IDLE, timeout=WAIT_MS)
        await page.wait_for_timeout(300)
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
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    main = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
            and e["args"].get("name") == "CrRendererMain"}
    kinds = {"scripting": ("FunctionCall", "EvaluateScript", "v8.evaluateModule", "TimerFire", "FireAnimationFrame",
                           "EventDispatch", "MinorGC", "MajorGC"),
             "style and layout": ("UpdateLayoutTree", "Layout"),
             "paint": ("Paint", "PrePaint", "Commit", "Layerize")}
    busy = dict.fromkeys(kinds, 0.0)
    for e in events:
        if (e.get("pid"), e.get("tid")) in main and e.get("ph") == "X":
            for kind, names in kinds.items():
                if e["name"] in names:
                    busy[kind] += e.get("dur", 0) / 1000 / presses
    return busy


async def run(args) -> dict:
    from playwright.async_api import async_playwright

    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="breakdown-") as tmp:
        folder = Path(tmp)
        (folder / "floor_app.py").write_text(FLOOR_APP)
        apps = {"app": ("streamlit_app.py", ROOT), "floor": ("floor_app.py", folder)}
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            procs, tabs = {}, {}
            try:
                for name, (script, cwd) in apps.items():
                    port = free_port()
                    procs[name] = start_server(port, folder / f"{name}.log", script=script, cwd=cwd)
                    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
                    page = await context.new_page()
                    await page.add_init_script(PAGE_CLOCK)
                    tabs[name] = Presses(page)
                    await open_table(page, f"http://127.0.0.1:{port}", time.monotonic())
                    await tabs[name].press()  # untimed: the first press of a session
                    tabs[name].rows.clear()
                    tabs[name].by_kind.clear()
                for _ in range(args.presses):
                    for name in apps:
                        await tabs[name].press()
                if args.trace:
                    for name in apps:
                        path = folder / f"{name}-trace.json"
                        await browser.start_tracing(page=tabs[name].page, path=str(path),
                                                    categories=["devtools.timeline", "v8.execute"])
                        for _ in range(5):
                            await tabs[name].press()
                        await browser.stop_tracing()
                        out[f"{name}-busy"] = main_thread_busy(path, 5)
            finally:
                await browser.close()
                for proc in procs.values():
                    stop_server(proc)
    for name in apps:
        out[name] = tabs[name]
    return out


def report(out: dict, args, command: str) -> str:
    lines = [f"$ {command}", f"medians over {args.presses} key presses on each, alternating",
             f"{'':34}{'app':>9}{'floor':>9}"]
    for label, key in (("key press to new table (ms)", "total"), ("  browser, before sending (ms)", "before"),
                       ("  server run (ms)", "server"), ("  browser, drawing (ms)", "drawing"),
                       ("frames received", "frames"), ("bytes received", "bytes")):
        app, floor = (statistics.median(r[key] for r in out[n].rows) for n in ("app", "floor"))
        lines.append(f"{label:34}{app:>9.0f}{floor:>9.0f}")
    for name in ("app", "floor"):
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
    given = argv if argv is not None else sys.argv[1:]
    command = "python bench/breakdown.py " + " ".join(shlex.quote(a) for a in given)
    print(report(asyncio.run(run(args)), args, command.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
