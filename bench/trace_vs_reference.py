"""Benchmark: core.trace against building torch.nn.Transformer and running it once, and GPT-3 shape-only.

For each size (N, M, E, nhead, vocab_size), 2+2 layers and d_ff = 4E, it times side by side,
interleaved in one process (who goes first rotates) so that machine noise hits both alike:
  trace      core.trace(cfg): build our model, draw its seeded weights, run one recorded pass, tabulate.
  reference  build torch.nn.Transformer with a source and a target embedding and an output layer of
             the same sizes, and run it once under no_grad, softmax included (the floor a learner
             would otherwise pay).
It prints each side's median and the median of the per-repeat ratios trace / reference (target <= 1.0).
Then the GPT-3 sizes traced shape-only on the meta device: the first call in this process (which
pays PyTorch's one-time meta warm-up) and the median of later, warm calls (target < 1 s).

    python bench/trace_vs_reference.py [--repeats 15] [--gpt3-repeats 5] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, without installing

from core import TransformerConfig, trace  # noqa: E402

# The encoder-decoder at GPT-3's widths, 96+96 layers, as the README's CLI example traces it.
GPT3_WIDTHS = TransformerConfig(N=64, M=2048, E=12288, nhead=96, layers=96, vocab_size=50257, tie_embeddings=True)
SIZES = [(2, 8, 16, 2, 100), (8, 64, 128, 8, 1000), (4, 128, 256, 8, 8000)]  # (N, M, E, nhead, vocab_size)
LAYERS = 2
RATIO_TARGET = 1.0
GPT3_TARGET_S = 1.0


class Reference(nn.Module):
    """torch.nn.Transformer with the embeddings and output layer our model has (untied, as by default)."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.src_embed = nn.Embedding(cfg.vocab_size, cfg.E)
        self.tgt_embed = nn.Embedding(cfg.vocab_size, cfg.E)
        self.transformer = nn.Transformer(d_model=cfg.E, nhead=cfg.nhead, num_encoder_layers=cfg.layers,
                                          num_decoder_layers=cfg.layers, dim_feedforward=cfg.d_ff,
                                          dropout=0.0, batch_first=True)
        self.generator = nn.Linear(cfg.E, cfg.vocab_size)

    def forward(self, src, tgt):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        hidden = self.transformer(self.src_embed(src), self.tgt_embed(tgt), tgt_mask=mask)  # (N, M_target, E)
        return self.generator(hidden).softmax(-1)  # (N, M_target, vocab_size)


def run_trace(cfg: TransformerConfig) -> None:
    trace(cfg)


def run_reference(cfg: TransformerConfig) -> None:
    src = torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M))  # (N, M)
    model = Reference(cfg).eval()
    with torch.no_grad():
        model(src, src)


def seconds(fn, cfg) -> float:
    start = time.perf_counter()
    fn(cfg)
    return time.perf_counter() - start


def compare(cfg: TransformerConfig, repeats: int) -> tuple[float, float, float]:
    """Median ms of trace and reference, and the median of the per-repeat ratios."""
    runners = [run_trace, run_reference]
    for fn in runners:
        fn(cfg)  # warm-up, not counted
    times: dict[str, list[float]] = {fn.__name__: [] for fn in runners}
    for rep in range(repeats):
        for fn in runners[rep % 2:] + runners[:rep % 2]:
            times[fn.__name__].append(seconds(fn, cfg))
    ratio = statistics.median(t / r for t, r in zip(times["run_trace"], times["run_reference"]))
    return statistics.median(times["run_trace"]) * 1e3, statistics.median(times["run_reference"]) * 1e3, ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--gpt3-repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="PyTorch threads (default 1, as the app's server runs)")
    args = parser.parse_args()
    if args.repeats < 1 or args.gpt3_repeats < 1:
        parser.error("--repeats and --gpt3-repeats must be at least 1")
    torch.set_num_threads(max(1, args.threads))

    first = seconds(trace, GPT3_WIDTHS)  # before any other meta pass: the process's first
    warm = statistics.median(seconds(trace, GPT3_WIDTHS) for _ in range(args.gpt3_repeats))

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {LAYERS}+{LAYERS} layers, d_ff=4E, "
          f"{args.repeats} interleaved repeats after one warm-up")
    print(f"{'N, M, E, nhead, vocab':>24} | {'trace ms':>9} {'reference ms':>12} | {'trace/reference':>15}")
    for N, M, E, nhead, vocab in SIZES:
        cfg = TransformerConfig(N=N, M=M, E=E, nhead=nhead, vocab_size=vocab, layers=LAYERS)
        t, r, ratio = compare(cfg, args.repeats)
        mark = "ok" if ratio <= RATIO_TARGET else f"over {RATIO_TARGET}"
        print(f"{f'{N}, {M}, {E}, {nhead}, {vocab}':>24} | {t:9.2f} {r:12.2f} | {ratio:13.2f}x  {mark}")
    mark = "ok" if warm < GPT3_TARGET_S else f"over {GPT3_TARGET_S} s"
    print(f"GPT-3 sizes shape-only: first call {first:.2f} s, warm median {warm:.2f} s ({mark})")


if __name__ == "__main__":
    main()
