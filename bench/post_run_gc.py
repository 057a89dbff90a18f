"""What Streamlit's collection after every script run costs, with and without pages/long_lived.py.

Streamlit calls gc.collect(2) after every script run (runner.postScriptGC). Two measurements:

1. In this process: import what the served app imports, trace the default config, then time
   full collections before and after gc.freeze(), and again after importing torch._dynamo (the
   training lab's background import) and freezing once more. Medians of --repeats.
2. With --served K: K pairs of fresh servers (`streamlit run`, TSE_GC_FREEZE=1 and =0, in turn,
   who goes first alternating). In each, Chromium opens the training lab and trains the default
   reversal run; the page redraws its progress four times a second, and each redraw is a script
   run. Reports the run's own training time (the page's "training time" figure) and the wall time
   from the click to the result.

    python bench/post_run_gc.py [--repeats 9] [--served 3]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def collect_ms(repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        gc.collect(2)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def in_process(repeats: int) -> None:
    import altair  # noqa: F401
    import pandas  # noqa: F401
    import streamlit  # noqa: F401

    import core
    import render.charts  # noqa: F401
    import render.tables  # noqa: F401

    core.trace(core.TransformerConfig())
    print(f"{'state':44} {'tracked objects':>15} {'gc.collect(2) ms':>17}")

    def row(state: str) -> None:
        print(f"{state:44} {len(gc.get_objects()):15,} {collect_ms(repeats):17.1f}")

    row("app imports and one trace")
    gc.freeze()
    row("after gc.freeze()")
    import torch._dynamo  # noqa: F401
    row("then torch._dynamo imported")
    gc.freeze()
    row("after a second gc.freeze()")
    gc.unfreeze()


def served_run(freeze: bool) -> tuple[float, float]:
    """(training seconds on the page, seconds from the click to the result) in a fresh server."""
    from playwright.sync_api import expect, sync_playwright

    from harness.server import CHROMIUM, CHROMIUM_ARGS, free_port, start_server, stop_server, wait_healthy

    os.environ["TSE_GC_FREEZE"] = "1" if freeze else "0"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_server(port, Path(f"/tmp/post_run_gc_{port}.log"))
    try:
        wait_healthy(url, proc, 90)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url + "/training_lab")
            train = page.locator(".st-key-tl_rev_run button").first
            expect(train).to_be_enabled(timeout=90_000)
            page.wait_for_timeout(3000)  # let the lab's background import of torch._dynamo finish
            start = time.perf_counter()
            train.click()
            result = page.get_by_text("first half (x) accuracy")
            expect(result).to_be_visible(timeout=180_000)
            wall = time.perf_counter() - start
            seconds = float(page.locator('[data-testid="stMetricValue"]').nth(3).inner_text().split()[0])
            browser.close()
        return seconds, wall
    finally:
        stop_server(proc)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--served", type=int, default=0, help="pairs of served training runs (0: skip)")
    args = parser.parse_args(argv)
    in_process(args.repeats)
    if args.served:
        print("\nserved default reversal run, lab page open: training s / click-to-result s")
        runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for i in range(args.served):
            for freeze in ((True, False) if i % 2 == 0 else (False, True)):
                runs[freeze].append(served_run(freeze))
                print(f"  pair {i + 1}, freeze {'on ' if freeze else 'off'}: "
                      f"{runs[freeze][-1][0]:.1f} / {runs[freeze][-1][1]:.1f}", flush=True)
        for freeze in (True, False):
            seconds = statistics.median(s for s, _ in runs[freeze])
            wall = statistics.median(w for _, w in runs[freeze])
            print(f"freeze {'on ' if freeze else 'off'}: median {seconds:.1f} s training, {wall:.1f} s click to result")


if __name__ == "__main__":
    main()
