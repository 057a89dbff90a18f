"""Run time of the Explorer's KV-cache section, the part of the page that computes: the view's arithmetic and
chart (core.views.kv_cache_view, render.kv_cache.kv_cache_spec) and, where it runs, the live check (a cached
generation of G tokens against one uncached pass, core.kv_cache.check_cache).

Usage:  python bench/kv_cache_view.py [--repeats 5] [--G 8]

Configs: the default sizes as decoder-only; the largest config whose live check runs (the default sizes at
G = MAX_CHECK_G); Llama-2-70B; and the largest the sidebar allows (every slider at its end, decoder-only),
which, like Llama-2-70B, is over the check's budget and gets the view alone. Each figure is the median of
``--repeats`` runs, uncached (the page caches the check by config and G), after one untimed run that builds the
chart's Altair template (once per set of lines, per process, as a server builds it for its first visitor). One
PyTorch thread, as the app runs.
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

from core import DEFAULT, TransformerConfig  # noqa: E402
from core.config import LLAMA2_70B  # noqa: E402
from core.kv_cache import MAX_CHECK_G, check_cache, check_refusal  # noqa: E402
from core.views import kv_cache_view, limit_torch_threads  # noqa: E402
from render.kv_cache import kv_cache_spec  # noqa: E402
from ui.link.config import FFS, LAYER_RANGE, LENGTHS, N_RANGE, VOCABS, WIDTHS, nhead_options  # noqa: E402


def largest() -> TransformerConfig:
    """Every size slider at its end, decoder-only: the most the sidebar can ask of the section."""
    E = WIDTHS[-1]
    return TransformerConfig(arch="decoder-only", N=N_RANGE[1], M=LENGTHS[-1], E=E, nhead=nhead_options(E)[-1],
                             vocab_size=VOCABS[-1], layers=LAYER_RANGE[1], d_ff=FFS[-1])


def median_ms(work, repeats: int) -> tuple[float, list[float]]:
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        runs.append(1000 * (time.perf_counter() - start))
    return statistics.median(runs), runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--G", type=int, default=8, help="generated tokens (the page's default is 8)")
    args = parser.parse_args()
    limit_torch_threads(1)
    default = DEFAULT.replace(arch="decoder-only")
    cases = {"default (decoder-only)": (default, args.G),
             f"largest live check (default, G={MAX_CHECK_G})": (default, MAX_CHECK_G),
             "Llama-2-70B": (LLAMA2_70B, args.G), "largest config (every slider at its end)": (largest(), args.G)}
    for label, (cfg, G) in cases.items():
        kv_cache_spec(kv_cache_view(cfg, G))  # the template, built once per process
        view, view_runs = median_ms(lambda: kv_cache_spec(kv_cache_view(cfg, G)), args.repeats)
        refusal = check_refusal(cfg, G)
        shown = ", ".join(f"{t:.1f}" for t in view_runs)
        line = f"{label:<44} G={G:<4} view + chart median {view:7.2f} ms (runs: {shown})"
        if refusal is None:
            check, runs = median_ms(lambda: check_cache(cfg, G), args.repeats)
            line += f"; live check median {check:8.1f} ms (runs: {', '.join(f'{t:.0f}' for t in runs)})"
        else:
            line += "; no live check (over its budget: shape only)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
