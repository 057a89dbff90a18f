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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the repo root holds harness/ and bench/

from bench.floor import HEADING_IS, IDLE, SWITCHES  # noqa: E402
from bench.side_by_side import (  # noqa: E402
    NAMES, WAIT_MS, WEBSOCKET_FRAMES, Tab, command_line, median_lines, messages_of, profile_lines, side_by_side,
)

# Installed before the app's own scripts: the times of every click, websocket frame and change of the h1s.
SWITCH_CLOCK = ("window.clock = {clicks: [], frames: [], headings: [], states: []};\n"
                "addEventListener('click', () => clock.clicks.push(performance.now()), true);\n" + WEBSOCKET_FRAMES
                + """(function watch() {
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
""")

STEPS = (("switch to the heading (ms)", "total"), ("  browser, before sending (ms)", "before"),
         ("  server, to run start (ms)", "start"), ("  run start to the heading (ms)", "heading"),
         ("  browser, heading drawn (ms)", "drawn"), ("elements before the heading", "before_heading"),
         ("from run start (ms): the sidebar's last widget", "sidebar"), ("  the navigation's last link", "navigation"),
         ("  the run's last message", "run"), ("switch to the page done (ms)", "done"),
         ("frames received", "frames"), ("bytes received", "bytes"))


class Switches(Tab):
    """One tab on one server: the switches' breakdowns."""

    def __init__(self, name: str, page, url: str):
        super().__init__(name, page, url)
        self.at = 0

    async def click(self) -> str:
        """Click the next page's link; the heading it leads to."""
        link, heading = SWITCHES[self.name][self.at % 2]
        self.at += 1
        nav = self.page.locator('[data-testid="stSidebarNav"], .st-key-page_nav').get_by_text(link, exact=True)
        await nav.click()
        return heading

    async def to_heading(self) -> None:
        """Click the next page's link and wait for its heading."""
        heading = await self.click()
        await self.page.wait_for_function(HEADING_IS, arg=heading, polling="raf", timeout=WAIT_MS)

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
    async with side_by_side(Switches, SWITCH_CLOCK, "switch-breakdown-") as (_, _, tabs):
        for name in NAMES:  # untimed: each page's first visit in the session
            for _ in range(2):
                await tabs[name].switch()
            tabs[name].rows.clear()
        for _ in range(args.switches):
            for name in NAMES:
                await tabs[name].switch()
        for name in NAMES:  # from each click to the heading
            for _ in range(args.profile):
                await tabs[name].settle()
                await tabs[name].profiled(tabs[name].to_heading, args.profile)
    return tabs


def report(tabs: dict[str, Switches], args, command: str) -> str:
    lines = [f"$ {command}", f"medians over {args.switches} page switches on each, alternating",
             *median_lines(tabs, STEPS, 48)]
    if args.profile:
        lines += profile_lines(tabs, f"renderer main thread per switch (ms), V8's CPU profile over {args.profile} "
                                     "switches, by script:", args.top, 48)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--switches", type=int, default=10, help="timed page switches on each app")
    parser.add_argument("--profile", type=int, default=0, help="switches of each sampled with V8's profiler (0: none)")
    parser.add_argument("--top", type=int, default=12, help="script files listed from the profile")
    args = parser.parse_args(argv)
    if not 2 <= args.switches <= 100 or not 0 <= args.profile <= 40 or not 1 <= args.top <= 50:
        parser.error("--switches 2-100, --profile 0-40, --top 1-50")
    command = command_line("switch_breakdown.py", sys.argv[1:] if argv is None else argv)
    print(report(asyncio.run(run(args)), args, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
