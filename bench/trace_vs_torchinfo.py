"""Benchmark: core.trace against what a learner would otherwise run, at the same sizes.

For each size it times, interleaved in one process so machine noise hits all three alike:
  trace     core.trace(cfg): build our model, run one recorded pass, tabulate.
  torchinfo build torch.nn.Transformer (plus embedding and output layer) and torchinfo.summary it.
  bare      build the same torch.nn.Transformer and run one forward pass under no_grad (the floor).
It reports per-run ratios' medians: trace/torchinfo (target <= 0.6) and trace/bare (target <= 1.0).
With --runs K it measures every size K times over and ends with the median of the K runs' ratios
and how many runs met each target, since on a shared machine one run can land on either side.
With --breakdown it then splits one trace per size into its parts: building the modules, drawing
the weights, the recorded forward pass, and within that pass the matrix products (aten::addmm,
mm and bmm, summed by torch.profiler), which no implementation of the same model can skip. Beside
them, the floor: our model's forward with nothing recorded, and nn.Transformer's own forward
(eval, no_grad), both on models built beforehand and timed in turn.

With --layers L both sides get L encoder and L decoder layers instead of LAYERS (for example 2, the
depth TransformerConfig has by default); every figure in the README is at LAYERS unless it says so.
A depth at which the largest size would go over core's memory budget is refused: trace would then
run shape-only, and there would be nothing comparable to time.

    python bench/trace_vs_torchinfo.py [--repeats 15] [--runs 1] [--breakdown] [--layers 6]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import TransformerConfig, trace  # noqa: E402
from core.memory import DEFAULT_BUDGET_BYTES, estimate  # noqa: E402

SIZES = [(2, 8, 16, 2, 100), (8, 64, 128, 8, 1000), (4, 128, 256, 8, 8000)]  # (N, M, E, nhead, vocab_size)
LAYERS = 6  # torch.nn.Transformer's default depth, used by both sides
INFO_TARGET = 0.6  # the targets: trace / torchinfo at most this at every size,
BARE_TARGET = 1.0  # and trace / bare at most this


def config_for(size: tuple[int, int, int, int, int], layers: int = LAYERS) -> TransformerConfig:
    """The benchmark's config for one of SIZES: those sizes, layers + layers deep, d_ff = 4E."""
    N, M, E, nhead, vocab = size
    return TransformerConfig(N=N, M=M, E=E, nhead=nhead, vocab_size=vocab, layers=layers)


class TorchSeq2Seq(nn.Module):
    """torch.nn.Transformer with an embedding and an output layer, as our model has.

    Source and target share this one embedding; ours has one for each by default, 2.05 million more
    weights at the largest size. Kept shared so that every recorded run stays comparable (the README
    gives what a second embedding costs torchinfo).
    """

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


@contextlib.contextmanager
def quiet_stderr():
    """Send the process's own stderr (file descriptor 2) to /dev/null for the block.

    Why: torch 2.13's profiler writes a "USDT: ... profiler_start" and a "profiler_stop" line from
    C++ for every profiled pass, which KINETO_LOG_LEVEL does not silence, and they buried the
    breakdown's table. A Python exception raised in the block still reaches the terminal, as it
    is printed after the descriptor is restored."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def breakdown(cfg: TransformerConfig, repeats: int) -> dict[str, float]:
    """Median milliseconds of each part of a trace at ``cfg``."""
    from torch.profiler import ProfilerActivity, profile

    from core.model import Transformer, generate_key_padding_mask, generate_square_subsequent_mask
    from core.weights import init_weights, skip_default_init
    from core.trace import PAD_ID, TraceRecorder, make_batch

    parts: dict[str, list[float]] = {"build": [], "init": [], "forward": [], "matrix products": [],
                                     "unrecorded": [], "torch forward": []}
    reference = TorchSeq2Seq(cfg).eval()
    for rep in range(repeats + 1):
        start = time.perf_counter()
        with skip_default_init():
            model = Transformer(vocab_size=cfg.vocab_size, E=cfg.E, nhead=cfg.nhead, layers=cfg.layers, d_ff=cfg.d_ff)
        built = time.perf_counter()
        init_weights(model, cfg.seed)
        drawn = time.perf_counter()
        with torch.inference_mode():
            src, tgt = make_batch(cfg)
            mask = generate_square_subsequent_mask(cfg.M_target)
            padding = generate_key_padding_mask(src, PAD_ID)
            forward_start = time.perf_counter()
            model(src, tgt, tgt_mask=mask, src_key_padding_mask=padding, memory_key_padding_mask=padding,
                  rec=TraceRecorder())
            forward_end = time.perf_counter()
            with quiet_stderr(), profile(activities=[ProfilerActivity.CPU]) as prof:  # a second, profiled pass
                model(src, tgt, tgt_mask=mask, src_key_padding_mask=padding, memory_key_padding_mask=padding,
                      rec=TraceRecorder())
            bare_start = time.perf_counter()
            model(src, tgt, tgt_mask=mask)  # the masks the reference gets: causal only
            bare_end = time.perf_counter()
        with torch.no_grad():
            reference(src, tgt)
        torch_end = time.perf_counter()
        products = sum(e.self_cpu_time_total for e in prof.key_averages()
                       if e.key in ("aten::addmm", "aten::mm", "aten::bmm")) / 1e6
        if rep:  # the first round warms up
            for key, value in zip(parts, (built - start, drawn - built, forward_end - forward_start, products,
                                          bare_end - bare_start, torch_end - bare_end)):
                parts[key].append(value * 1e3)
    return {k: statistics.median(v) for k, v in parts.items()}


def timed(fn, cfg) -> float:
    start = time.perf_counter()
    fn(cfg)
    return time.perf_counter() - start


def measure(cfg: TransformerConfig, repeats: int) -> tuple[dict[str, float], float, float]:
    """One run at one size: median milliseconds of each runner, and the medians of the ratios."""
    runners = {"trace": run_trace, "torchinfo": run_torchinfo, "bare": run_bare}
    for fn in runners.values():
        fn(cfg)  # warm-up
    times: dict[str, list[float]] = {name: [] for name in runners}
    for rep in range(repeats):
        order = list(runners.items())
        order = order[rep % 3:] + order[:rep % 3]  # rotate who goes first
        for name, fn in order:
            times[name].append(timed(fn, cfg))
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    r_info = statistics.median(t / i for t, i in zip(times["trace"], times["torchinfo"]))
    r_bare = statistics.median(t / b for t, b in zip(times["trace"], times["bare"]))
    return med, r_info, r_bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--runs", type=int, default=1,
                        help="measure every size this many times over, then summarise the runs")
    parser.add_argument("--breakdown", action="store_true", help="then split one trace per size into its parts")
    parser.add_argument("--layers", type=int, default=LAYERS,
                        help=f"encoder layers and decoder layers, each, on both sides (default {LAYERS})")
    args = parser.parse_args()
    if args.repeats < 1 or args.runs < 1:
        parser.error("--repeats and --runs must be at least 1")
    try:
        configs = {size: config_for(size, args.layers) for size in SIZES}
    except ValueError as err:  # the config's own message names the limits
        parser.error(f"--layers: {err}")
    largest = estimate(configs[SIZES[-1]]).total
    if largest > DEFAULT_BUDGET_BYTES:  # trace would go shape-only and time nothing comparable
        parser.error(f"--layers {args.layers}: a real pass at {SIZES[-1]} needs about {largest / 2**20:.0f} MiB, "
                     f"over core's {DEFAULT_BUDGET_BYTES / 2**20:.0f} MiB budget, so trace would run shape-only")
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, layers={args.layers}, d_ff=4E, "
          f"{args.repeats} interleaved repeats (first call per size discarded)")
    first = timed(run_trace, TransformerConfig(N=2, M=8, E=16, nhead=2, vocab_size=100))
    ratios: dict[tuple, list[tuple[float, float]]] = {size: [] for size in SIZES}
    for run in range(args.runs):
        if args.runs > 1:
            print(f"\nrun {run + 1} of {args.runs}")
        print(f"{'N, M, E, nhead, vocab':>24} | {'trace ms':>9} {'torchinfo ms':>12} {'bare ms':>8} | "
              f"{'trace/torchinfo':>15} {'trace/bare':>10}")
        for size in SIZES:
            med, r_info, r_bare = measure(configs[size], args.repeats)
            ratios[size].append((r_info, r_bare))
            print(f"{str(size):>24} | {med['trace']:9.1f} {med['torchinfo']:12.1f} "
                  f"{med['bare']:8.1f} | {r_info:15.3f} {r_bare:10.3f}")
    if args.runs > 1:
        print(f"\nover {args.runs} runs: the median of the per-run ratios, and the runs that met each target")
        print(f"{'N, M, E, nhead, vocab':>24} | {'trace/torchinfo':>15} {f'<= {INFO_TARGET}':>7} | "
              f"{'trace/bare':>10} {f'<= {BARE_TARGET}':>7}")
        for size, pairs in ratios.items():
            info, bare = [r for r, _ in pairs], [r for _, r in pairs]
            print(f"{str(size):>24} | {statistics.median(info):15.3f} {sum(r <= INFO_TARGET for r in info):>3} of "
                  f"{len(info):<2} | {statistics.median(bare):10.3f} {sum(r <= BARE_TARGET for r in bare):>3} of "
                  f"{len(bare)}")
    print(f"first trace in this process (after imports): {first * 1e3:.1f} ms")
    if args.breakdown:
        print(f"\n{'N, M, E, nhead, vocab':>24} | {'build ms':>8} {'init ms':>8} {'forward ms':>10} "
              f"{'of which matrix products ms':>27} | {'unrecorded ms':>13} {'nn.Transformer ms':>17}")
        for size in SIZES:
            part = breakdown(configs[size], args.repeats)
            print(f"{str(size):>24} | {part['build']:8.1f} {part['init']:8.1f} "
                  f"{part['forward']:10.1f} {part['matrix products']:27.1f} | {part['unrecorded']:13.1f} "
                  f"{part['torch forward']:17.1f}")


if __name__ == "__main__":
    main()
