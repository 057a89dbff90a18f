"""Benchmark: the cost of one random weight, PyTorch's way and core.init_weights' way.

Per random number, in nanoseconds (medians, interleaved in one process, one thread each):
  torch uniform_     PyTorch's mt19937 draw, what nn.Linear's default initialisation uses;
  numpy random+scale numpy's SFC64 floats on [0, 1), then stretched to [-b, b];
  SFC64 32-bit words raw 32-bit integers times b / 2^31 (core's first version of this);
  SFC64 16-bit words what core.model._fill_chunk does: raw 16-bit integers times b / 2^15.
Then numpy's bit generators side by side (raw 64-bit words, which is why _fill_chunk uses SFC64).
Then whole models: core.init_weights (on two threads once a model has more than one chunk)
against PyTorch's double initialisation on one thread (each layer's default draws, then Xavier),
for the three sizes of trace_vs_torchinfo.py.

    python bench/init_weights.py [--repeats 21]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import Transformer  # noqa: E402
from core.model import init_weights  # noqa: E402
from trace_vs_torchinfo import SIZES, TorchSeq2Seq, config_for  # noqa: E402  (the main benchmark's sizes and reference)


def medians(runners: dict, repeats: int) -> dict[str, float]:
    """Median seconds per runner, runs interleaved so machine noise hits all alike."""
    for fn in runners.values():
        fn()  # warm-up
    times: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(repeats):
        for name, fn in runners.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(v) for name, v in times.items()}


def per_number(repeats: int) -> None:
    n = 1 << 20
    out = torch.empty(n)
    view = out.numpy()
    gen = torch.Generator().manual_seed(0)
    rng = np.random.Generator(np.random.SFC64(0))
    bits = np.random.SFC64(0)
    bound = 0.05

    def numpy_scaled():
        rng.random(out=view, dtype=np.float32)
        np.multiply(view, np.float32(2 * bound), out=view)
        np.subtract(view, np.float32(bound), out=view)

    def words32():
        words = bits.random_raw(n // 2).view(np.int32)
        np.multiply(words, np.float32(bound / 2**31), out=view, dtype=np.float32, casting="unsafe")

    def words16():
        words = bits.random_raw(n // 4).view(np.int16)
        np.multiply(words, np.float32(bound / 2**15), out=view, dtype=np.float32, casting="unsafe")

    runners = {"torch uniform_": lambda: out.uniform_(-bound, bound, generator=gen),
               "numpy random+scale": numpy_scaled, "SFC64 32-bit words": words32, "SFC64 16-bit words": words16}
    for name, seconds in medians(runners, repeats).items():
        print(f"{name:>20}: {seconds / n * 1e9:5.2f} ns per number")


def bit_generators(repeats: int) -> None:
    """Raw 64-bit words from each of numpy's bit generators: the random bits _fill_chunk spends."""
    n = 1 << 17
    generators = {name: getattr(np.random, name)(0) for name in ("SFC64", "PCG64", "PCG64DXSM", "MT19937", "Philox")}
    runners = {name: (lambda g=g: g.random_raw(n)) for name, g in generators.items()}
    print("  ".join(f"{name} {seconds / n * 1e9:.2f}" for name, seconds in medians(runners, repeats).items())
          + "  ns per 64-bit word")


def torch_default_init(model: nn.Module) -> None:
    """What building torch.nn.Transformer costs in drawing: each layer's default, then Xavier."""
    for module in model.modules():
        if hasattr(module, "reset_parameters") and module is not model:
            module.reset_parameters()
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)


def whole_models(repeats: int) -> None:
    print(f"{'E, nhead, vocab':>18} | {'params':>10} {'ours ms':>8} {'PyTorch ms':>10} | {'ours/PyTorch':>12}")
    for size in SIZES:
        cfg = config_for(size)
        ours = Transformer.from_config(cfg, draw_weights=False)
        reference = TorchSeq2Seq(cfg)
        med = medians({"ours": lambda: init_weights(ours, 0), "torch": lambda: torch_default_init(reference)},
                      repeats)
        params = sum(p.numel() for p in ours.parameters())
        print(f"{str((cfg.E, cfg.nhead, cfg.vocab_size)):>18} | {params:>10,} {med['ours'] * 1e3:8.1f} "
              f"{med['torch'] * 1e3:10.1f} | {med['ours'] / med['torch']:12.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    print(f"torch {torch.__version__}, numpy {np.__version__}, {torch.get_num_threads()} threads, "
          f"{args.repeats} interleaved repeats")
    per_number(args.repeats)
    bit_generators(args.repeats)
    whole_models(args.repeats)


if __name__ == "__main__":
    main()
