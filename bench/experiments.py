"""Time every live experiment behind the quizzes: median of repeated runs, per config.

    python bench/experiments.py                 # default config, 7 runs each
    python bench/experiments.py --repeat 11 --all-presets --threads 1 --json

The issue's bar: each experiment under 1 s at the default config. The first call of each
experiment is a warm-up and is not counted (imports, allocator, kernel selection).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from core.config import DEFAULT, PRESETS  # noqa: E402
from quizzes.experiments import EXPERIMENTS  # noqa: E402


def time_one(name: str, cfg, repeat: int) -> dict:
    EXPERIMENTS[name](cfg)  # warm-up
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        EXPERIMENTS[name](cfg)
        runs.append(time.perf_counter() - start)
    return {"experiment": name, "median_s": statistics.median(runs), "min_s": min(runs), "max_s": max(runs)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--all-presets", action="store_true", help="also time every sidebar preset")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: leave PyTorch's default)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    configs = {"default": DEFAULT} | (dict(PRESETS) if args.all_presets else {})
    results = []
    for label, cfg in configs.items():
        for name in EXPERIMENTS:
            results.append({"config": label, **time_one(name, cfg, args.repeat)})
    if args.json:
        print(json.dumps({"torch_threads": torch.get_num_threads(), "repeat": args.repeat, "results": results}))
        return 0
    print(f"torch threads: {torch.get_num_threads()}, {args.repeat} timed runs each (after one warm-up)")
    for r in results:
        flag = "" if r["median_s"] < 1.0 else "  <-- over 1 s"
        print(f"{r['config'][:40]:40s} {r['experiment']:18s} median {1000 * r['median_s']:8.1f} ms"
              f"  (min {1000 * r['min_s']:.1f}, max {1000 * r['max_s']:.1f}){flag}")
    worst = max(r["median_s"] for r in results if r["config"] == "default")
    print(f"slowest median at the default config: {1000 * worst:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
