"""What the breakdown scripts share: the app and bench/floor.py's floor app served side by side, a tab on each
that records the websocket's messages, the page's own clock of them, V8's profile of the renderer, and the
report's rows. Each of breakdown.py, load_breakdown.py and switch_breakdown.py times one kind of reading with it.
"""

from __future__ import annotations

import collections
import contextlib
import json
import shlex
import statistics
import tempfile
import time
from pathlib import Path

from bench.floor import FLOORS, open_table, wait_until_run_done
from harness.server import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_server, stop_server

WAIT_MS = 120_000
NAMES = ("app", "floor")

# Part of each page clock, installed before the app's own scripts: the time and size of every websocket frame
# received ('in') and sent ('out'), into clock.frames.
WEBSOCKET_FRAMES = """
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
"""


def messages_of(payloads: list[bytes]) -> list[tuple[str, int | None, str]]:
    """Each forward message: its kind (an element's type for a new element), the container of a delta (0 the
    page, 1 the sidebar) and a heading's text."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    out = []
    for payload in payloads:
        msg = ForwardMsg()
        msg.ParseFromString(payload)
        kind = msg.WhichOneof("type")
        container, text = None, ""
        if kind == "delta":
            container = msg.metadata.delta_path[0] if msg.metadata.delta_path else None
            delta = msg.delta.WhichOneof("type")
            kind = msg.delta.new_element.WhichOneof("type") if delta == "new_element" else delta
            if kind == "heading":
                text = msg.delta.new_element.heading.body
        out.append((kind, container, text))
    return out


def kinds_of(payloads: list[bytes]) -> list[str]:
    return [kind for kind, _, _ in messages_of(payloads)]


class Tab:
    """One browser tab on one server: the messages it received, one row of figures per reading, and the renderer's
    sampled time by script file."""

    def __init__(self, name: str, page, url: str):
        self.name, self.page, self.url = name, page, url
        self.payloads: list[bytes] = []
        self.rows: list[dict] = []
        self.by_file: collections.Counter = collections.Counter()
        page.on("websocket", lambda ws: ws.on("framereceived", lambda p: self.payloads.append(
            p if isinstance(p, bytes) else p.encode())))

    async def settle(self) -> None:
        """Idle, then a pause (not timed) so the page has settled before the next reading."""
        await wait_until_run_done(self.page)

    async def profiled(self, action, readings: int) -> None:
        """V8's CPU profile of the renderer while ``action()`` runs, added to by_file as milliseconds per reading."""
        cdp = await self.page.context.new_cdp_session(self.page)
        await cdp.send("Profiler.enable")
        await cdp.send("Profiler.setSamplingInterval", {"interval": 500})
        await cdp.send("Profiler.start")
        await action()
        profile = (await cdp.send("Profiler.stop"))["profile"]
        await cdp.detach()
        nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
        for sample, delta in zip(profile["samples"], profile["timeDeltas"]):
            frame = nodes[sample]
            name = frame["url"].rsplit("/", 1)[-1] or f"({frame['functionName']})"
            self.by_file[name] += delta / 1000 / readings


def renderer_main_events(path: Path) -> list[dict]:
    """The events of the renderer's main thread in a Chromium timeline saved by browser.stop_tracing."""
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    main = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
            and e["args"].get("name") == "CrRendererMain"}
    return [e for e in events if (e.get("pid"), e.get("tid")) in main]


@contextlib.asynccontextmanager
async def side_by_side(make_tab, clock: str, prefix: str, floor: str = "trivial"):
    """Start the app's and the floor's servers (``floor`` names one of bench/floor.py's FLOORS), open a tab on each
    with ``clock`` installed and its table shown, and yield the browser, the folder of the servers' logs and
    {name: make_tab(name, page, url)}."""
    from playwright.async_api import async_playwright

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        folder = Path(tmp)
        (folder / "floor_app.py").write_text(FLOORS[floor])
        apps = {"app": ("streamlit_app.py", ROOT), "floor": ("floor_app.py", folder)}
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            procs, tabs = {}, {}
            try:
                for name, (script, cwd) in apps.items():
                    port = free_port()
                    url = f"http://127.0.0.1:{port}"
                    procs[name] = start_server(port, folder / f"{name}.log", script=script, cwd=cwd)
                    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
                    page = await context.new_page()
                    await page.add_init_script(clock)
                    tabs[name] = make_tab(name, page, url)
                    await open_table(page, url, time.monotonic())
                yield browser, folder, tabs
            finally:
                await browser.close()
                for proc in procs.values():
                    stop_server(proc)


def median_lines(tabs: dict[str, Tab], steps, width: int) -> list[str]:
    """One line a step: its label and the median of its key over every reading, app and floor."""
    lines = [f"{'':{width}}{'app':>9}{'floor':>9}"]
    for label, key in steps:
        app, floor = (statistics.median(r[key] for r in tabs[n].rows) for n in NAMES)
        lines.append(f"{label:{width}}{app:>9.0f}{floor:>9.0f}")
    return lines


def profile_lines(tabs: dict[str, Tab], heading: str, top: int, width: int) -> list[str]:
    """The renderer's sampled time by script file, the app's largest ``top`` first."""
    lines = [heading]
    for name, _ in tabs["app"].by_file.most_common(top):
        lines.append(f"  {name[:width - 2]:{width - 2}}{tabs['app'].by_file[name]:>9.0f}"
                     f"{tabs['floor'].by_file[name]:>9.0f}")
    lines.append(f"  {'all sampled':{width - 2}}{sum(tabs['app'].by_file.values()):>9.0f}"
                 f"{sum(tabs['floor'].by_file.values()):>9.0f}")
    return lines


def command_line(script: str, argv: list[str]) -> str:
    return " ".join(["python", f"bench/{script}", *map(shlex.quote, argv)])
