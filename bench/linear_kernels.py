"""Benchmark: F.linear (MKL) against oneDNN's fused kernel, the choice core.model.linear makes.

Three parts, each interleaved in one process so machine noise hits both sides alike:
  products  every linear-layer product of the main benchmark's three sizes (bench/trace_vs_torchinfo.py),
            timed with each kernel: median times and the median of the per-round ratios oneDNN / F.linear,
            beside the product's multiply-adds, which decide the kernel (core.onednn.MIN_MACS);
  traces    whole core.trace calls at those sizes with F.linear only and with oneDNN from three
            thresholds (core.onednn.MIN_MACS among them), in turn;
  memory    (--memory) what oneDNN's caches cost: fresh interpreters on one thread with glibc's own malloc
            thresholds, as the app's server runs, each making one product of each of 150 new shapes,
            then each tracing 150 random configs, with F.linear, with oneDNN at its default
            cache sizes and with oneDNN at core's (core.onednn.ENTRIES), the last also with PyTorch
            imported before core, as the main benchmark does; the growth of the resident set, and for
            the configs also after glibc's malloc_trim, which gives free memory back.

    python bench/linear_kernels.py [--rounds 41] [--memory] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import core  # noqa: E402  (first: core bounds oneDNN's caches before PyTorch's first oneDNN call)
import torch  # noqa: E402
from torch.nn import functional as F  # noqa: E402

from core import onednn  # noqa: E402
from trace_vs_torchinfo import SIZES, config_for  # noqa: E402  (the main benchmark's sizes and config)


def interleaved(runners: dict, rounds: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median seconds per runner, the order rotating every round, and for each runner the median of
    its per-round ratios to the first runner."""
    for fn in runners.values():
        fn()  # warm-up: the first oneDNN call of a shape builds its kernel
    names = list(runners)
    times: dict[str, list[float]] = {name: [] for name in names}
    for rnd in range(rounds):
        for name in names[rnd % len(names):] + names[:rnd % len(names)]:
            start = time.perf_counter()
            runners[name]()
            times[name].append(time.perf_counter() - start)
    ratios = {name: statistics.median(t / b for t, b in zip(times[name], times[names[0]])) for name in names}
    return {k: statistics.median(v) for k, v in times.items()}, ratios


def products_of(cfg) -> dict[str, tuple[int, int, int]]:
    """The model's linear-layer products at ``cfg``: name -> (rows, in_features, out_features). The
    benchmark's sizes have M_target = M, so the encoder's and the decoder's products have as many rows."""
    enc, dec = cfg.N * cfg.M, cfg.N * cfg.M_target
    return {"self-attention Q, K, V": (enc, cfg.E, 3 * cfg.E), "W^O and cross-attention's W^Q": (dec, cfg.E, cfg.E),
            "cross-attention's K, V": (enc, cfg.E, 2 * cfg.E), "FFN first layer": (enc, cfg.E, cfg.d_ff),
            "FFN second layer": (enc, cfg.d_ff, cfg.E), "output layer": (dec, cfg.E, cfg.vocab_size)}


def products(rounds: int) -> None:
    print(f"{'size':>22} {'product':>31} {'rows x in x out':>17} {'MACs':>8} | {'F.linear':>8} {'oneDNN':>8} | "
          f"{'oneDNN/F.linear':>15}")
    for size in SIZES:
        for name, (rows, d_in, d_out) in products_of(config_for(size)).items():
            x, w, b = torch.randn(rows, d_in), torch.randn(d_out, d_in), torch.randn(d_out)
            med, ratios = interleaved({
                "F.linear": lambda: F.linear(x, w, b),
                "oneDNN": lambda: torch.ops.mkldnn._linear_pointwise(x, w, b, "none", [], "")}, rounds)
            macs = rows * d_in * d_out
            mark = "*" if macs >= onednn.MIN_MACS else " "
            print(f"{str(size):>22} {name:>31} {f'{rows}x{d_in}x{d_out}':>17} {macs:8.1e}{mark}| "
                  f"{med['F.linear'] * 1e3:6.3f}ms {med['oneDNN'] * 1e3:6.3f}ms | {ratios['oneDNN']:15.3f}")
    print(f"* at least core.onednn.MIN_MACS = {onednn.MIN_MACS:.0e} multiply-adds: core gives it to oneDNN")


def traces(rounds: int) -> None:
    """Whole traces with F.linear only, and with oneDNN from three thresholds: every product, core's
    MIN_MACS, and 10^8 multiply-adds (at the largest size, only the QKV, FFN and output products)."""
    saved = onednn.LINEAR, onednn.MIN_MACS
    default = onednn.MIN_MACS
    thresholds = {"every product": 0, f"from {default:.0e}": default, "from 1e+08": 10**8}
    print("\nwhole traces, time relative to F.linear only, with oneDNN for the products of at least")
    print(f"{'N, M, E, nhead, vocab':>24} | {'F.linear ms':>11} | " + " ".join(f"{k:>14}" for k in thresholds))
    try:
        for size in SIZES:
            cfg = config_for(size)

            def run(on: bool, threshold: int):
                onednn.LINEAR, onednn.MIN_MACS = on, threshold
                core.trace(cfg)

            runners = {"off": lambda: run(False, default)}
            runners.update({k: (lambda t=t: run(True, t)) for k, t in thresholds.items()})
            med, ratios = interleaved(runners, rounds)
            print(f"{str(size):>24} | {med['off'] * 1e3:11.1f} | "
                  + " ".join(f"{ratios[k]:14.3f}" for k in thresholds))
    finally:
        onednn.LINEAR, onednn.MIN_MACS = saved  # as core set them at import


MEMORY_CHILD = r"""
import ctypes, json, random, sys
mode = sys.argv[1]
if sys.argv[2] == "torch first":  # as bench/trace_vs_torchinfo.py does: core sets the sizes after PyTorch loads
    import torch
import core, torch
torch.set_num_threads(1)
core.onednn.LINEAR = mode != "F.linear"
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
start = rss()
for i in range(150):
    x, w, b = torch.randn(512, 256), torch.randn(1024 + 8 * i, 256), torch.randn(1024 + 8 * i)
    with torch.inference_mode():
        core.model.linear(x, w, b)
shapes = rss() - start
rng = random.Random(0)
core.trace(core.TransformerConfig(N=2, M=8, E=16, nhead=2, vocab_size=100))
start = peak = rss()
for _ in range(150):
    cfg = core.TransformerConfig(N=rng.randint(1, 8), M=rng.randint(16, 160), E=rng.choice([64, 128, 192, 256, 384]),
                                 nhead=8, vocab_size=rng.randint(500, 8000), layers=2)
    core.trace(cfg)
    peak = max(peak, rss())
configs = rss() - start
ctypes.CDLL("libc.so.6").malloc_trim(0)
print(json.dumps({"shapes": shapes, "configs": configs, "peak": peak - start, "trimmed": rss() - start}))
"""


def memory() -> None:
    """Each setting in a fresh interpreter, with glibc's own malloc thresholds, as the app's server has."""
    print(f"\n{'kernel, cache entries':>42} | {'150 shapes':>10} | {'150 configs':>11} {'peak':>6} "
          f"{'after malloc_trim':>17}  (MiB of resident-set growth)")
    default = {"ONEDNN_PRIMITIVE_CACHE_CAPACITY": "1024", "LRU_CACHE_CAPACITY": "1024"}
    for label, mode, env, order in (
            ("F.linear", "F.linear", {}, "core first"),
            ("oneDNN, 1,024 (its default)", "oneDNN", default, "core first"),
            (f"oneDNN, {onednn.ENTRIES} (core's)", "oneDNN", {}, "core first"),
            (f"oneDNN, {onednn.ENTRIES}, torch imported first", "oneDNN", {}, "torch first")):
        child_env = {k: v for k, v in os.environ.items()
                     if k not in ("TSE_ONEDNN", "ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY")}
        child_env.update(env, TSE_MALLOC_TUNING="0")
        out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, mode, order], cwd=ROOT, env=child_env, check=True,
                             capture_output=True, text=True).stdout
        grew = json.loads(out.splitlines()[-1])
        print(f"{label:>42} | {grew['shapes']:10.1f} | {grew['configs']:11.1f} {grew['peak']:6.1f} "
              f"{grew['trimmed']:17.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--memory", action="store_true", help="also measure what the caches cost in memory")
    parser.add_argument("--threads", type=int, default=0,
                        help="PyTorch threads for the products and traces (default: PyTorch's own; the server uses 1)")
    args = parser.parse_args()
    if args.rounds < 1 or args.threads < 0:
        parser.error("--rounds must be at least 1 and --threads at least 0")
    if args.threads:
        torch.set_num_threads(args.threads)
    if not onednn._kernel_works():
        parser.exit(2, "this PyTorch build has no oneDNN linear kernel: nothing to compare\n")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.rounds} interleaved rounds")
    products(args.rounds)
    traces(args.rounds)
    if args.memory:
        memory()


if __name__ == "__main__":
    main()
