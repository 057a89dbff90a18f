"""How long the app takes to rerun after a slider change, measured with Streamlit's AppTest.

Usage:  python bench/app_rerun.py [--repeats 15]

For each starting point (the default config and the paper's base preset) it moves sliders to
values not seen before in this process (so every rerun is a cache miss: a new config, a new
trace), then moves them back over the same values (cache hits), and prints the medians. AppTest
runs the script in-process, so the figures exclude the browser and the websocket, and include
AppTest's own per-run overhead (it recompiles the page scripts on every run).
One extra run before timing starts takes one-off imports out of the figures: they are steady-state.
Not a test: timings depend on the machine; docs/performance.md says what this measures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.runtime.pages_manager import PagesManager  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from core import PRESETS  # noqa: E402
from ui.streamlit_internals import without_pages_dir  # noqa: E402

PAPER_BASE_NAME = next(name for name in PRESETS if name.startswith("Paper base"))


def timed_run(at: AppTest) -> float:
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"the app raised: {at.exception[0].value}")
    return elapsed


def slider_moves(at: AppTest, moves: list[tuple[str, object]]) -> list[float]:
    """Apply each (widget key, value) change and time the rerun it causes."""
    times = []
    for key, value in moves:
        widget = at.sidebar.slider(key=key) if key in ("w_N", "w_layers") else at.sidebar.select_slider(key=key)
        widget.set_value(value)
        times.append(timed_run(at))
    return times


def bench(label: str, preset: str | None, moves: list[tuple[str, object]], page: str | None = None) -> None:
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.run()
    if preset is not None:
        at.sidebar.selectbox(key="w_preset").set_value(preset)
        at.run()
    if page is not None:
        at.switch_page(page)
        at.run()
    timed_run(at)  # one more run so one-off imports and warm-ups are out of the figures
    cold = slider_moves(at, moves)
    warm = slider_moves(at, moves)
    ms = lambda xs: f"{1000 * statistics.median(xs):6.1f} ms"  # noqa: E731
    print(f"{label:<44} new config: median {ms(cold)} (n={len(cold)}, max {1000 * max(cold):.0f} ms);"
          f"  seen config: median {ms(warm)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="slider moves per series")
    args = parser.parse_args()
    PagesManager.__init__ = without_pages_dir(PagesManager.__init__)  # entry script on every rerun
    n = args.repeats
    # Default config (N=2, M=8, E=16): N through 3.., then M through lengths not used yet.
    default_moves = [("w_N", 3 + i) for i in range(n)]
    default_moves += [("w_M", m) for m in range(9, 9 + n)]
    # Paper base (N=1, M=16, E=512, 6+6 layers, 37000 tokens). Shorter M and fewer layers keep a
    # real pass within the 256 MiB budget; larger N goes over it (shape-only).
    base_moves = [("w_M", m) for m in (15, 14, 13, 12, 11, 10, 9)]
    base_moves += [("w_layers", n) for n in (5, 4, 3, 2, 1)]
    base_moves += [("w_N", n) for n in (2, 3, 4)]
    bench("Explorer, default config", None, default_moves)
    bench("Explorer, paper base preset", PAPER_BASE_NAME, base_moves)
    bench("Attention page, default config", None, default_moves[:n], page="pages/attention.py")
    bench("Attention page, paper base (real passes)", PAPER_BASE_NAME, base_moves[:5], page="pages/attention.py")


if __name__ == "__main__":
    main()
