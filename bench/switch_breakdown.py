"""Where a page switch's time goes, in the app and in bench/floor.py's floor app, side by side in one run.

Each server is started once; Chromium clicks a page in each app's navigation in turn (the app: Attention and
the Explorer; the floor: its two pages), --switches times each, alternating, and the page itself notes the
times (performance.now()) of the click, of every websocket frame and of the moment the new page's heading is on
screen. The messages a switch receives are decoded, so each switch splits into:

  browser, before sending      the click to the browser's first frame to the server;
  server, to run start         that frame to the run's first message (new_session: the script has started);
  run start to the heading     to the message that carries the page's heading;
  browser, heading drawn       that message to the heading on screen;
  elements before the heading  the deltas the run sends before the heading, which the browser draws first;
  from run start               when the sidebar's last widget, the navigation's last link and the run's last
                               message arrive: the script's order;
  switch to the page done      the click to the browser showing the run finished (the whole page drawn).

Each step is measured at the browser, as messages arrive: Streamlit flushes its queue to the websocket every
few milliseconds (a shorter step reads as 0), and a browser busy drawing reads its messages late, so a late
step may be the browser's. The floor draws its slider, in its entry script, before its page's heading, so its
steps fall differently: read its total and its elements before the heading.

With --profile it also samples the renderer's main thread (V8's CPU profiler) over --profile more switches of
each, from the click to the heading on screen, and gives its time by script file.

    python bench/switch_breakdown.py                  # 10 switches on each
    python bench/switch_breakdown.py --switches 20 --profile 6
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

from bench.floor import FLOOR_APP, HEADING_IS, IDLE, SWITCHES, open_table  # noqa: E402
from harness.server import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_server, stop_server  # noqa: E402

WAIT_MS = 120_000

# Installed before the app's own scripts: the times of every click, websocket frame and change of the h1s.
SWITCH_CLOCK = """
window.clock = {clicks: [], frames: [], headings: [], states: []};
addEventListener('click', () => clock.clicks.push(performance.now()), true);
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
  const text = [...document.querySelectorAll('h1')].map(h => h.innerText.trim()).join('|');
  if (clock.headings[clock.headings.length - 1]?.[1] !== text) clock.headings.push([performance.now(), text]);
  const app = document.querySelector('[data-testid="stApp"]');
  if (app !== null && !app.watched) {  // every change of the run's state, as it happens
    app.watched = true;
    new MutationObserver(() => clock.states.push([performance.now(), app.getAttribute('data-test-script-state')]))
      .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  }
  requestAnimationFrame(watch);
})();
"""

STEPS = (("switch to the heading (ms)", "total"), ("  browser, before sending (ms)", "before"),
         ("  server, to run start (ms)", "start"), ("  run start to the heading (ms)", "heading"),
         ("  browser, heading drawn (ms)", "drawn"), ("elements before the heading", "before_heading"),
         ("from run start (ms): the sidebar's last widget", "sidebar"), ("  the navigation's last link", "navigation"),
         ("  the run's last message", "run"), ("switch to the page done (ms)", "done"),
         ("frames received", "frames"), ("bytes received", "bytes"))


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


class Switches:
    """One tab on one server: the switches' breakdowns."""

    def __init__(self, name: str, page):
        self.name, self.page = name, page
        self.payloads: list[bytes] = []
        self.rows: list[dict] = []
        self.by_file: collections.Counter = collections.Counter()
        self.at = 0
        page.on("websocket", lambda ws: ws.on("framereceived", lambda p: self.payloads.append(
            p if isinstance(p, bytes) else p.encode())))

    async def settle(self) -> None:
        """Idle, then a pause (not timed) so the page has settled before the next switch."""
        await self.page.wait_for_function(IDLE, timeout=WAIT_MS)
        await self.page.wait_for_timeout(300)
        await self.page.wait_for_function(IDLE, timeout=WAIT_MS)

    async def click(self) -> str:
        """Click the next page's link; the heading it leads to."""
        link, heading = SWITCHES[self.name][self.at % 2]
        self.at += 1
        nav = self.page.locator('[data-testid="stSidebarNav"], .st-key-page_nav').get_by_text(link, exact=True)
        await nav.click()
        return heading

    async def profile(self, switches: int) -> None:
        """V8's CPU profile of the renderer from each click to the heading: sampled milliseconds by script file."""
        for _ in range(switches):
            cdp = await self.page.context.new_cdp_session(self.page)
            await cdp.send("Profiler.enable")
            await cdp.send("Profiler.setSamplingInterval", {"interval": 500})
            await self.settle()
            await cdp.send("Profiler.start")
            heading = await self.click()
            await self.page.wait_for_function(HEADING_IS, arg=heading, polling="raf", timeout=WAIT_MS)
            profile = (await cdp.send("Profiler.stop"))["profile"]
            await cdp.detach()
            await self.page.wait_for_function(IDLE, timeout=WAIT_MS)
            nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
            for sample, delta in zip(profile["samples"], profile["timeDeltas"]):
                frame = nodes[sample]
                name = frame["url"].rsplit("/", 1)[-1] or f"({frame['functionName']})"
                self.by_file[name] += delta / 1000 / switches

    async def switch(self) -> None:
        page = self.page
        await self.settle()
        clock_at = await page.evaluate("[clock.clicks.length, clock.frames.length]")
        received_at = len(self.payloads)
        heading = await self.click()
        await page.wait_for_function(HEADING_IS, arg=heading, polling="raf", timeout=WAIT_MS)
        await page.wait_for_function(IDLE, timeout=WAIT_MS)
        await page.wait_for_timeout(200)
        clock = await page.evaluate("clock")
        if len(clock["clicks"]) <= clock_at[0]:
            raise RuntimeError("the page reloaded on a switch: its clock started again")
        click = clock["clicks"][clock_at[0]]
        frames = clock["frames"][clock_at[1]:]
        messages = messages_of(self.payloads[received_at:])
        arrived = [f[0] for f in frames if f[1] == "in"]
        if len(arrived) != len(messages):
            raise RuntimeError(f"{len(arrived)} frames seen by the page, {len(messages)} by Playwright")
        sent = next(f[0] for f in frames if f[1] == "out")
        kinds = [m[0] for m in messages]
        start = kinds.index("new_session")
        head = next(i for i, (kind, _, text) in enumerate(messages) if kind == "heading" and text == heading)
        deltas = [i for i, m in enumerate(messages) if m[1] is not None]
        links = [i for i in deltas if kinds[i] == "page_link"]
        side = [i for i in deltas if messages[i][1] == 1 and kinds[i] != "page_link" and (not links or i < links[0])]
        shown = next(t for t, text in clock["headings"] if t > click and heading in text.split("|"))
        finished = arrived[kinds.index("script_finished")] if "script_finished" in kinds else arrived[-1]
        done = next((t for t, state in clock["states"] if t > finished and state == "notRunning"), finished)
        run_start = arrived[start]
        self.rows.append({
            "total": shown - click, "before": sent - click, "start": run_start - sent,
            "heading": arrived[head] - run_start, "drawn": max(0.0, shown - arrived[head]),
            "before_heading": len([i for i in deltas if i < head]),
            "sidebar": arrived[side[-1]] - run_start if side else 0.0,
            "navigation": arrived[links[-1]] - run_start if links else 0.0,
            "run": finished - run_start, "done": done - click, "frames": len(messages),
            "bytes": sum(map(len, self.payloads[received_at:]))})


async def run(args) -> dict[str, Switches]:
    from playwright.async_api import async_playwright

    tabs: dict[str, Switches] = {}
    with tempfile.TemporaryDirectory(prefix="switch-breakdown-") as tmp:
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
                    await page.add_init_script(SWITCH_CLOCK)
                    tabs[name] = Switches(name, page)
                    await open_table(page, url, time.monotonic())
                for name in apps:  # untimed: each page's first visit in the session
                    for _ in range(2):
                        await tabs[name].switch()
                    tabs[name].rows.clear()
                for _ in range(args.switches):
                    for name in apps:
                        await tabs[name].switch()
                if args.profile:
                    for name in apps:
                        await tabs[name].profile(args.profile)
            finally:
                await browser.close()
                for proc in procs.values():
                    stop_server(proc)
    return tabs


def report(tabs: dict[str, Switches], args, command: str) -> str:
    lines = [f"$ {command}", f"medians over {args.switches} page switches on each, alternating",
             f"{'':48}{'app':>9}{'floor':>9}"]
    for label, key in STEPS:
        app, floor = (statistics.median(r[key] for r in tabs[n].rows) for n in ("app", "floor"))
        lines.append(f"{label:48}{app:>9.0f}{floor:>9.0f}")
    if args.profile:
        lines.append(f"renderer main thread per switch (ms), V8's CPU profile over {args.profile} switches, by script:")
        for name, _ in tabs["app"].by_file.most_common(args.top):
            lines.append(f"  {name[:46]:46}{tabs['app'].by_file[name]:>9.0f}{tabs['floor'].by_file[name]:>9.0f}")
        lines.append(f"  {'all sampled':46}{sum(tabs['app'].by_file.values()):>9.0f}"
                     f"{sum(tabs['floor'].by_file.values()):>9.0f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--switches", type=int, default=10, help="timed page switches on each app")
    parser.add_argument("--profile", type=int, default=0, help="switches of each sampled with V8's profiler (0: none)")
    parser.add_argument("--top", type=int, default=12, help="script files listed from the profile")
    args = parser.parse_args(argv)
    if not 2 <= args.switches <= 100 or not 0 <= args.profile <= 40 or not 1 <= args.top <= 50:
        parser.error("--switches 2-100, --profile 0-40, --top 1-50")
    given = argv if argv is not None else sys.argv[1:]
    command = "python bench/switch_breakdown.py " + " ".join(shlex.quote(a) for a in given)
    print(report(asyncio.run(run(args)), args, command.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
