"""Time the marking of an imported progress file again, every question answered.

    python bench/recheck.py               # four files, 3 runs each
    python bench/recheck.py --core-max    # and a fifth, at the largest configs core accepts (slow)

An import checks each answer against the model at the config it names (``quizzes/recheck.py``), and
the page does so while the learner waits. What that wait costs depends on how many configs a file
names and how large they are, so the files here are: every answer at the default config; each at a
small config of its own; all at the sliders' largest config; each at a config of its own at the
sliders' largest sizes (N from 1 to 64, then M_target); and with ``--core-max`` each at a config of
its own at core's upper limits, which the page refuses (it checks those at the default config), to
show why. Each run makes its contexts afresh, as a new session would; the app's caches would only
make a second import cheaper.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import streamlit.logger  # noqa: E402

streamlit.logger.set_log_level("error")  # ui.traces's caches warn, on import, that no app is running

from core import DEFAULT, TransformerConfig  # noqa: E402
from core.config import MAX_D_FF, MAX_E, MAX_LAYERS, MAX_M, MAX_N, MAX_VOCAB_SIZE  # noqa: E402
from ui.config_link import LENGTHS, on_sliders  # noqa: E402
from quizzes import QUESTIONS  # noqa: E402
from quizzes.progress import new_progress, record  # noqa: E402
from quizzes.recheck import new_context, recheck  # noqa: E402

SLIDERS_LARGEST = TransformerConfig(N=64, M=4096, E=12288, nhead=96, vocab_size=65536, layers=96, d_ff=49152)


def each_its_own(base: TransformerConfig, count: int) -> list[TransformerConfig]:
    """``count`` distinct configs near ``base``, all on the sliders: N from 1 to 64, then M_target."""
    configs = [base.replace(N=n) for n in range(1, 65)]
    configs += [base.replace(M_target=m) for m in reversed(LENGTHS) if m != base.M]
    return configs[:count]


def core_max(count: int) -> list[TransformerConfig]:
    """Distinct configs at core's limits (by seed: the sliders have none, so none of these is on them).
    nhead=256 is the most heads whose attention maps PyTorch can size at N=MAX_N and M=MAX_M."""
    top = TransformerConfig(N=MAX_N, M=MAX_M, E=MAX_E, nhead=256, vocab_size=MAX_VOCAB_SIZE, layers=MAX_LAYERS,
                            d_ff=MAX_D_FF)
    return [top.replace(seed=seed) for seed in range(count)]


def progress_file(configs: list[TransformerConfig]) -> dict:
    """Every question answered "0" (wrong, mostly; the check costs the same), the i-th at configs[i]."""
    progress = new_progress()
    for q, cfg in zip(QUESTIONS, configs):
        progress = record(progress, q.id, "0", False, "?", cfg.to_dict())
    return progress


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--core-max", action="store_true", help="also time configs at core's limits (about a minute a run)")
    args = p.parse_args(argv)
    n = len(QUESTIONS)
    files = {
        "all at the default config": [DEFAULT] * n,
        "each at a small config of its own": each_its_own(DEFAULT, n),
        "all at the sliders' largest config": [SLIDERS_LARGEST] * n,
        "each at its own config, sliders' largest sizes": each_its_own(SLIDERS_LARGEST, n),
    }
    if args.core_max:
        files["each at its own config, core's limits (off the sliders)"] = core_max(n)
    for label, configs in files.items():
        assert len(set(configs)) in (1, n), label
        slider_note = "on the sliders" if all(map(on_sliders, set(configs))) else "off the sliders"
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            _, outcome = recheck(progress_file(configs), new_context)
            times.append(time.perf_counter() - start)
            assert outcome.checked == n and outcome.left_out == 0, outcome
        print(f"{label:58s} {len(set(configs)):2d} config(s), {slider_note}: median {statistics.median(times):6.2f} s"
              f"  (runs: {', '.join(f'{t:.2f}' for t in times)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
