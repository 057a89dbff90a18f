"""A/B: this tree's core.trace against core at another git revision, in turn, in one process.

Timings on a shared machine drift by tens of percent within minutes, so two separate runs of
trace_vs_torchinfo.py cannot show a change of a few percent. Here both versions trace the same
sizes alternately (who goes first swaps every round), and the script reports the median of the
per-round ratios new/old. The old `core` is taken with `git archive` into a temporary folder and
imported under another name; its modules import each other relatively, so nothing else changes.
With --part build or --part init it times only that part of a trace: building the modules
(Transformer.from_config without weights), or drawing the weights into a model built beforehand.

    python bench/ab_core.py 8e62925 [--rounds 61] [--part trace|build|init]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import core  # noqa: E402
from trace_vs_torchinfo import LAYERS, SIZES  # noqa: E402  (the same sizes as the main benchmark)


def import_core_at(rev: str, folder: Path):
    """core as it was at ``rev``, imported as the package core_<rev>."""
    archive = subprocess.run(["git", "archive", rev, "core"], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    name = "core_" + "".join(c if c.isalnum() else "_" for c in rev)
    (folder / "core").rename(folder / name)
    sys.path.insert(0, str(folder))
    return importlib.import_module(name)


def part_of(package, part: str, sizes: dict):
    """(function, argument) that does ``part`` of a trace with ``package``, a version of core."""
    cfg = package.TransformerConfig(**sizes)
    if part == "build":
        return (lambda c: package.model.Transformer.from_config(c, draw_weights=False)), cfg
    if part == "init":
        model = package.model.Transformer.from_config(cfg, draw_weights=False)
        return (lambda c: package.model.init_weights(model, c.seed)), cfg
    return package.trace, cfg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the git revision to compare against, e.g. a commit or HEAD~1")
    parser.add_argument("--rounds", type=int, default=61)
    parser.add_argument("--part", choices=("trace", "build", "init"), default="trace",
                        help="time whole traces (default), only building the modules, or only drawing the weights")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old_core = import_core_at(args.rev, Path(tmp))
        print(f"{args.rounds} rounds, layers={LAYERS}, timing {args.part}; new = this tree, old = {args.rev}")
        print(f"{'N, M, E, nhead, vocab':>24} | {'new ms':>7} {'old ms':>7} | {'new/old':>7}")
        for N, M, E, nhead, vocab in SIZES:
            sizes = dict(N=N, M=M, E=E, nhead=nhead, vocab_size=vocab, layers=LAYERS)
            runners = {"new": part_of(core, args.part, sizes), "old": part_of(old_core, args.part, sizes)}
            times: dict[str, list[float]] = {name: [] for name in runners}
            for rnd in range(args.rounds + 2):  # the first two rounds warm up and are dropped
                for name in (("new", "old") if rnd % 2 else ("old", "new")):
                    fn, cfg = runners[name]
                    start = time.perf_counter()
                    fn(cfg)
                    if rnd >= 2:
                        times[name].append(time.perf_counter() - start)
            ratio = statistics.median(a / b for a, b in zip(times["new"], times["old"]))
            print(f"{str((N, M, E, nhead, vocab)):>24} | {statistics.median(times['new']) * 1e3:7.1f} "
                  f"{statistics.median(times['old']) * 1e3:7.1f} | {ratio:7.3f}")


if __name__ == "__main__":
    main()
