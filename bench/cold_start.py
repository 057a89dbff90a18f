"""Why a cold start is sometimes slow: time fresh processes and count the file pages they read back.

Each run starts a new Python that imports core and traces the smallest config, the work every
fresh `streamlit run` or `python -m core` does first. Around it the script reads two of the
kernel's counters in /proc/vmstat (Linux only; they count the whole machine, so other work adds
to them):
  workingset_refault_file  file pages read back from disk shortly after the kernel evicted them;
  pgmajfault               page faults that had to wait for the disk.
It starts two such processes one after the other, waits --idle seconds with none of its own
alive, then starts two more. If the first one after the wait reads many pages back and is
slower, something evicted PyTorch's library files from the page cache while nothing had them
mapped. On this project's development machine that something is DAMON: a kernel thread
(kdamond) with a "pageout" scheme for file pages no process maps, once they have gone unused for
about a minute; see /sys/kernel/mm/damon/admin/kdamonds/*/contexts/*/schemes/*/.

    python bench/cold_start.py [--idle 150]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = "import core; core.trace(core.TransformerConfig(N=2, M=8, E=16, nhead=2, vocab_size=100))"
COUNTERS = ("workingset_refault_file", "pgmajfault")


def counters() -> dict[str, int]:
    """The kernel's running totals for COUNTERS (all zero where /proc/vmstat has none)."""
    found = dict.fromkeys(COUNTERS, 0)
    try:
        lines = Path("/proc/vmstat").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        name, _, value = line.partition(" ")
        if name in found:
            found[name] = int(value)
    return found


def fresh_process(label: str) -> None:
    """Start one fresh Python, wait for it, and print its wall time and the counters' growth."""
    before, start = counters(), time.perf_counter()
    subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, check=True)
    seconds, after = time.perf_counter() - start, counters()
    grown = {k: after[k] - before[k] for k in COUNTERS}
    print(f"{label:>24}: {seconds:5.2f} s, {grown['workingset_refault_file']:>7} file pages read back "
          f"({grown['workingset_refault_file'] * 4 / 1024:.1f} MiB at 4 KiB), "
          f"{grown['pgmajfault']:>5} major faults", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=float, default=150, help="seconds to wait with no PyTorch process alive")
    args = parser.parse_args()
    if not Path("/proc/vmstat").exists():
        parser.exit(2, "error: this needs Linux's /proc/vmstat\n")
    fresh_process("first")
    fresh_process("again at once")
    print(f"waiting {args.idle:g} s ...", flush=True)
    time.sleep(args.idle)
    fresh_process(f"after {args.idle:g} s idle")
    fresh_process("again at once")


if __name__ == "__main__":
    main()
