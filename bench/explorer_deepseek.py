"""Benchmark: the Explorer's first visit at DeepSeek-V3 against the same at Llama-2-70B (target: at most 1.5x).

What the page builds for a config it has not seen (pages/explorer.py, explorer_view), timed side by side in one
process, interleaved (who goes first alternates), so machine noise hits both alike:
  trace      core.trace(cfg, shape_only=True), as ui.compute.traces.cached_shapes runs it for a model this large
  memory     core.views.memory_curve(cfg), the points of the Memory chart
  tables     render.tables: the table, its stacked view and the extras, as cells
  diagram    render.diagram: the architecture figure (SVG) and its steps in words
  specs      render.tables: the Parameters and Memory charts' specs
Nothing is cached between rounds: each round is what a first visit to that config costs the server.
It prints each part's medians and the median of the per-round ratios DeepSeek-V3 / Llama-2-70B.

With ``--app`` it times the page itself instead: Streamlit's AppTest opens the Explorer from each model's link,
with every cache the app keeps by config emptied first (bench/page_latency.py's first run), interleaved likewise,
and prints the wall time and the process's CPU time of each run: a machine shared with other work stretches the
wall time of both sides unevenly, the CPU time far less.

    python bench/explorer_deepseek.py [--rounds 7] [--threads 1] [--app]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, without installing

from core import TransformerConfig, trace  # noqa: E402
from core.config import DEEPSEEK_V3, LLAMA2_70B  # noqa: E402
from core.views import memory_curve  # noqa: E402
from render.diagram import architecture_steps, architecture_svg  # noqa: E402
from render.tables import memory_spec, params_spec, rows_frame, table_cells  # noqa: E402

RATIO_TARGET = 1.5
PARTS = ("trace", "memory", "tables", "diagram", "specs")


def first_visit(cfg: TransformerConfig) -> dict[str, float]:
    """Seconds of each part of explorer_view for ``cfg``, in the page's order."""
    out: dict[str, float] = {}
    start = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal start
        now = time.perf_counter()
        out[name] = now - start
        start = now

    t = trace(cfg, shape_only=True)
    lap("trace")
    points, crossover = memory_curve(cfg)
    lap("memory")
    for kind in ({}, {"stacked": True}, {"extras": True}):
        table_cells(rows_frame(t, **kind))
    lap("tables")
    architecture_svg(cfg, t.shapes)
    architecture_steps(cfg, t.shapes)
    lap("diagram")
    params_spec(t)
    memory_spec(points, cfg.M, crossover, "light", None, one_stack=cfg.M_target is None)
    lap("specs")
    return out


def app_first_visits(models: dict[str, TransformerConfig], rounds: int) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds of the Explorer's first run at each model's link, caches emptied, in AppTest;
    interleaved."""
    import page_latency as pl  # bench/page_latency.py: the AppTest set-up and the first-run timing

    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test
    from ui.server.streamlit_internals import without_pages_dir

    PagesManager.__init__ = without_pages_dir(PagesManager.__init__)  # as page_latency.main sets it up
    shared = ScriptCache()  # each script compiled once, as a server does
    app_test.ScriptCache = lambda: shared
    at = pl.new_app(pl.PAGES["explorer"])
    for cfg in models.values():
        pl.page_times(at, cfg)  # warm-up, not counted
    def first_run(cfg: TransformerConfig) -> tuple[float, float]:
        """(wall, CPU) seconds of the page's first run at ``cfg``: AppTest's script thread does the work while the
        calling thread waits, so the process's CPU time is the run's."""
        pl.empty_caches()
        pl.go_to(at, cfg)
        cpu, wall = time.process_time(), time.perf_counter()
        at.run()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if at.exception:
            raise RuntimeError(f"the app raised: {at.exception[0].value}")
        pl.checked(at, cfg)
        return wall, cpu

    times: dict[str, list[tuple[float, float]]] = {name: [] for name in models}
    names = list(models)
    for rnd in range(rounds):
        for name in names[rnd % 2:] + names[:rnd % 2]:
            times[name].append(first_run(models[name]))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1, help="PyTorch threads (default 1, as the app's server runs)")
    parser.add_argument("--app", action="store_true", help="time the page in AppTest, from each model's link")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    torch.set_num_threads(max(1, args.threads))
    models = {"DeepSeek-V3": DEEPSEEK_V3, "Llama-2-70B": LLAMA2_70B}
    if args.app:
        times_app = app_first_visits(models, args.rounds)
        print(f"torch {torch.__version__}, {args.rounds} interleaved rounds after one warm-up; the Explorer's first "
              "run from each model's link, caches emptied, in AppTest")
        for name, runs in times_app.items():
            print(f"{name:<12} median wall {1000 * statistics.median(w for w, _ in runs):7.1f} ms, CPU "
                  f"{1000 * statistics.median(c for _, c in runs):7.1f} ms  (wall runs: "
                  f"{', '.join(f'{1000 * w:.0f}' for w, _ in runs)})")
        for i, what in enumerate(("wall", "CPU")):
            ratio = statistics.median(d[i] / l[i] for d, l in zip(times_app["DeepSeek-V3"], times_app["Llama-2-70B"]))
            mark = "ok" if ratio <= RATIO_TARGET else f"over {RATIO_TARGET}"
            print(f"DeepSeek-V3 / Llama-2-70B, {what}: {ratio:.2f}x (median of per-round ratios)  {mark}")
        return
    for cfg in models.values():
        first_visit(cfg)  # warm-up, not counted: a server has paid PyTorch's one-time meta set-up (ui/server/warm_up.py)
    times: dict[str, list[dict[str, float]]] = {name: [] for name in models}
    names = list(models)
    for rnd in range(args.rounds):
        for name in names[rnd % 2:] + names[:rnd % 2]:
            times[name].append(first_visit(models[name]))
    totals = {name: [sum(r.values()) for r in runs] for name, runs in times.items()}
    ratio = statistics.median(d / l for d, l in zip(totals["DeepSeek-V3"], totals["Llama-2-70B"]))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.rounds} interleaved rounds after one "
          "warm-up; the Explorer's first visit, server side, without Streamlit")
    print(f"{'median ms':<12}" + "".join(f"{p:>9}" for p in (*PARTS, "total")))
    for name, runs in times.items():
        cells = [statistics.median(r[p] for r in runs) for p in PARTS] + [statistics.median(totals[name])]
        print(f"{name:<12}" + "".join(f"{1000 * c:9.1f}" for c in cells))
    mark = "ok" if ratio <= RATIO_TARGET else f"over {RATIO_TARGET}"
    print(f"DeepSeek-V3 / Llama-2-70B {ratio:.2f}x (median of per-round ratios)  {mark}")


if __name__ == "__main__":
    main()
