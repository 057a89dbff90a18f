"""Benchmark: ``python -m core --json`` at Mixtral-8x7B's sizes in a fresh process (target < 4 s), beside the
same command at Llama-3-8B's sizes (the dense model of bench/families.py's CLI figure), interleaved.

Both run shape-only on the meta device (far over the memory budget). Each round starts two fresh processes,
who goes first alternating; it prints each side's median and the median per-round ratio Mixtral / Llama-3-8B,
which shows what the 8 experts of each layer add whatever the machine's load.

    python bench/experts.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout, without installing

from core import TransformerConfig  # noqa: E402
from core.config import LLAMA3_8B, MIXTRAL_8X7B  # noqa: E402

CLI_TARGET_S = 4.0


def flags(cfg: TransformerConfig) -> list[str]:
    """The command line that gives ``cfg``: every field that differs from the default config's."""
    default = TransformerConfig().to_dict()
    out = []
    for name, value in cfg.to_dict().items():
        if value == default[name] or value is None:
            continue
        flag = f"--{name.replace('_', '-')}"
        out += [flag if value else f"--no-{flag[2:]}"] if isinstance(value, bool) else [flag, str(value)]
    return out


def cli_seconds(cfg: TransformerConfig) -> float:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "core", *flags(cfg), "--json"], cwd=ROOT, capture_output=True,
                         text=True)
    took = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    mixtral, llama, ratios = [], [], []
    for i in range(args.repeats):
        pair = (MIXTRAL_8X7B, LLAMA3_8B) if i % 2 == 0 else (LLAMA3_8B, MIXTRAL_8X7B)
        times = {id(cfg): cli_seconds(cfg) for cfg in pair}
        mixtral.append(times[id(MIXTRAL_8X7B)])
        llama.append(times[id(LLAMA3_8B)])
        ratios.append(mixtral[-1] / llama[-1])
    median = statistics.median(mixtral)
    verdict = "ok" if median < CLI_TARGET_S else "OVER"
    print(f"python -m core --json, fresh process, median of {args.repeats}:")
    print(f"  Mixtral-8x7B {median:.2f} s ({verdict}, target < {CLI_TARGET_S} s)")
    print(f"  Llama-3-8B   {statistics.median(llama):.2f} s")
    print(f"  ratio Mixtral / Llama-3-8B {statistics.median(ratios):.2f}")
    print("  flags: " + " ".join(flags(MIXTRAL_8X7B)))


if __name__ == "__main__":
    main()
