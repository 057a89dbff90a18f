"""Benchmark: core.trace against what a learner would otherwise run, at the same sizes.

For each size it times, interleaved in one process so machine noise hits all three alike:
  trace     core.trace(cfg): build our model, run one recorded pass, tabulate.
  torchinfo build torch.nn.Transformer (plus embedding and output layer) and torchinfo.summary it.
  bare      build the same torch.nn.Transformer and run one forward pass under no_grad (the floor).
It reports per-run ratios' medians: trace/torchinfo (target <= 0.6) and trace/bare (target <= 1.0).

    python bench/trace_vs_torchinfo.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import MALLOC_TUNED, TransformerConfig, trace  # noqa: E402

SIZES = [(2, 8, 16, 2, 100), (8, 64, 128, 8, 1000), (4, 128, 256, 8, 8000)]  # (N, M, E, nhead, vocab_size)
LAYERS = 6  # torch.nn.Transformer's default depth, used by both sides


class TorchSeq2Seq(nn.Module):
    """torch.nn.Transformer with the embedding and output layer our model also has."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.E)
        self.transformer = nn.Transformer(d_model=cfg.E, nhead=cfg.nhead, num_encoder_layers=cfg.layers,
                                          num_decoder_layers=cfg.layers, dim_feedforward=cfg.d_ff,
                                          dropout=0.0, batch_first=True)
        self.generator = nn.Linear(cfg.E, cfg.vocab_size)

    def forward(self, src, tgt):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        hidden = self.transformer(self.embed(src), self.embed(tgt), tgt_mask=mask)  # (N, M_target, E)
        return self.generator(hidden).softmax(-1)  # (N, M_target, vocab_size)


def run_trace(cfg):
    trace(cfg)


def run_torchinfo(cfg):
    import torchinfo

    src = torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M))
    torchinfo.summary(TorchSeq2Seq(cfg), input_data=[src, src], verbose=0, device="cpu")


def run_bare(cfg):
    src = torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M))
    model = TorchSeq2Seq(cfg).eval()
    with torch.no_grad():
        model(src, src)


def timed(fn, cfg) -> float:
    start = time.perf_counter()
    fn(cfg)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, layers={LAYERS}, d_ff=4E, "
          f"{args.repeats} interleaved repeats (first call per size discarded), "
          f"malloc tuning {'on' if MALLOC_TUNED else 'off'} for all three (core/allocator.py)")
    print(f"{'N, M, E, nhead, vocab':>24} | {'trace ms':>9} {'torchinfo ms':>12} {'bare ms':>8} | "
          f"{'trace/torchinfo':>15} {'trace/bare':>10}")
    first = timed(run_trace, TransformerConfig(N=2, M=8, E=16, nhead=2, vocab_size=100))
    for N, M, E, nhead, vocab in SIZES:
        cfg = TransformerConfig(N=N, M=M, E=E, nhead=nhead, vocab_size=vocab, layers=LAYERS)
        runners = {"trace": run_trace, "torchinfo": run_torchinfo, "bare": run_bare}
        for fn in runners.values():
            fn(cfg)  # warm-up
        times = {name: [] for name in runners}
        for rep in range(args.repeats):
            order = list(runners.items())
            order = order[rep % 3:] + order[:rep % 3]  # rotate who goes first
            for name, fn in order:
                times[name].append(timed(fn, cfg))
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        r_info = statistics.median(t / i for t, i in zip(times["trace"], times["torchinfo"]))
        r_bare = statistics.median(t / b for t, b in zip(times["trace"], times["bare"]))
        print(f"{str((N, M, E, nhead, vocab)):>24} | {med['trace']:9.1f} {med['torchinfo']:12.1f} "
              f"{med['bare']:8.1f} | {r_info:15.2f} {r_bare:10.2f}")
    print(f"first trace in this process (after imports): {first * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
