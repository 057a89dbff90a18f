"""Benchmark: DeepSeek-V3's shape-only trace against Hugging Face's DeepseekV3ForCausalLM on the meta device.

Side by side in one process, interleaved (who goes first alternates), so machine noise hits both alike:
  trace      core.trace(DEEPSEEK_V3, shape_only=True): build our model on the meta device, run one recorded
             pass there, tabulate every row and count the parameters.
  reference  build transformers.DeepseekV3ForCausalLM from its own default config (DeepSeek-V3's sizes) on the
             meta device and run its forward on (N, M) meta ids. Its routed experts run as "batched_mm": the
             default loop asks which experts received tokens, which a meta tensor cannot answer.
It prints each side's median and the median of the per-round ratios trace / reference (target <= 1.0).

    python bench/deepseek_v3_trace.py [--rounds 7] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, without installing

import transformers  # noqa: E402

from core import trace  # noqa: E402
from core.config import DEEPSEEK_V3  # noqa: E402

RATIO_TARGET = 1.0


def run_trace() -> None:
    trace(DEEPSEEK_V3, shape_only=True)


def run_reference() -> None:
    cfg = DEEPSEEK_V3
    with torch.device("meta"), torch.inference_mode():
        model = transformers.DeepseekV3ForCausalLM(transformers.DeepseekV3Config(experts_implementation="batched_mm"))
        model(torch.zeros(cfg.N, cfg.M, dtype=torch.long)).logits  # (N, M, vocab_size)


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1, help="PyTorch threads (default 1, as the app's server runs)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    torch.set_num_threads(max(1, args.threads))
    runners = [run_trace, run_reference]
    for fn in runners:
        fn()  # warm-up, not counted: the first meta pass of each pays PyTorch's one-time set-up
    times: dict[str, list[float]] = {fn.__name__: [] for fn in runners}
    for rnd in range(args.rounds):
        for fn in runners[rnd % 2:] + runners[:rnd % 2]:
            times[fn.__name__].append(seconds(fn))
    ratio = statistics.median(t / r for t, r in zip(times["run_trace"], times["run_reference"]))
    t, r = (statistics.median(times[name]) for name in ("run_trace", "run_reference"))
    cfg = DEEPSEEK_V3
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, {torch.get_num_threads()} threads, "
          f"{args.rounds} interleaved rounds after one warm-up; DeepSeek-V3 at N={cfg.N}, M={cfg.M}")
    mark = "ok" if ratio <= RATIO_TARGET else f"over {RATIO_TARGET}"
    print(f"shape-only trace {t:.3f} s | HF meta build + forward {r:.3f} s | trace/reference {ratio:.2f}x  {mark}")


if __name__ == "__main__":
    main()
