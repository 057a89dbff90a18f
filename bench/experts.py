"""Benchmark: ``python -m core --json`` at Mixtral-8x7B's sizes in a fresh process (target < 4 s), beside the
same command at Llama-3-8B's sizes (the dense model of bench/families.py's CLI figure), interleaved.

Both run shape-only on the meta device (far over the memory budget). Each round starts two fresh processes,
who goes first alternating; it prints each side's median and the median per-round ratio Mixtral / Llama-3-8B,
which shows what the 8 experts of each layer add whatever the machine's load. Beside the wall time it prints the
CPU time each process used (user + system): a machine shared with other work stretches the wall time many times
over, the CPU time far less, so on a loaded machine that is the figure to read against the 4 s.

    python bench/experts.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import resource
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


def cpu_of_children() -> float:
    """CPU seconds (user + system) of every child process this one has waited for."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def cli_seconds(cfg: TransformerConfig) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh ``python -m core ... --json`` at ``cfg``."""
    cpu, start = cpu_of_children(), time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "core", *flags(cfg), "--json"], cwd=ROOT, capture_output=True,
                         text=True)
    took = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return took, cpu_of_children() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    mixtral, llama, ratios = [], [], []
    for i in range(args.repeats):
        pair = (MIXTRAL_8X7B, LLAMA3_8B) if i % 2 == 0 else (LLAMA3_8B, MIXTRAL_8X7B)
        times = {id(cfg): cli_seconds(cfg) for cfg in pair}
        mixtral.append(times[id(MIXTRAL_8X7B)])
        llama.append(times[id(LLAMA3_8B)])
        ratios.append(mixtral[-1][0] / llama[-1][0])
    wall, cpu = (statistics.median(t[k] for t in mixtral) for k in (0, 1))
    print(f"python -m core --json, fresh process, median of {args.repeats} (load average before: {load}):")
    print(f"  Mixtral-8x7B wall {wall:.2f} s ({'ok' if wall < CLI_TARGET_S else 'over'} {CLI_TARGET_S} s), "
          f"CPU {cpu:.2f} s ({'ok' if cpu < CLI_TARGET_S else 'over'} {CLI_TARGET_S} s)")
    print(f"  Llama-3-8B   wall {statistics.median(t[0] for t in llama):.2f} s, "
          f"CPU {statistics.median(t[1] for t in llama):.2f} s")
    print(f"  ratio Mixtral / Llama-3-8B (wall) {statistics.median(ratios):.2f}")
    print("  flags: " + " ".join(flags(MIXTRAL_8X7B)))


if __name__ == "__main__":
    main()
