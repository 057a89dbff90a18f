"""How close PyTorch's float32 matrix products come to what this CPU can do at all.

The benchmark's largest size spends most of a trace in the linear layers (their products are the
same in every implementation of the model), so their speed is the floor under any trace. This
script times each linear-layer product of that size, on one thread and on all of them, and sets
the rate beside the CPU's arithmetic peak:

    peak per core = FMA units x float32 lanes per register x 2 (a multiply and an add) x clock

The lanes come from the widest vector extension in /proc/cpuinfo (8 for AVX2, 16 for AVX-512),
the clock from its "cpu MHz" line (a virtual machine may report a nominal clock; a core that
boosts above it makes the real peak higher, and a share over 100% shows it did). ``--fma-units``
is 2 on most x86 cores of recent years (AMD Zen 2 and later, Intel since Haswell).

    python bench/matmul_peak.py [--repeats 31] [--fma-units 2]
"""

from __future__ import annotations

import argparse

import torch
from torch.nn import functional as F

from init_weights import medians  # the bench scripts' timing helper
from trace_vs_torchinfo import SIZES, config_for  # the main benchmark's sizes and its config for them

CFG = config_for(SIZES[-1])  # the largest benchmark size, with the benchmark's own d_ff
ROWS = CFG.N * CFG.M  # every position is one row of width E
SHAPES = {  # name: (rows, in_features, out_features)
    "self-attention's Q, K, V (E -> 3E)": (ROWS, CFG.E, 3 * CFG.E),
    "cross-attention's K, V (E -> 2E)": (ROWS, CFG.E, 2 * CFG.E),
    "cross-attention's Q, and W^O (E -> E)": (ROWS, CFG.E, CFG.E),
    "FFN first layer (E -> d_ff)": (ROWS, CFG.E, CFG.d_ff),
    "FFN second layer (d_ff -> E)": (ROWS, CFG.d_ff, CFG.E),
    "output layer (E -> vocab_size)": (ROWS, CFG.E, CFG.vocab_size),
}


def cpu_facts() -> tuple[float, int, str]:
    """(clock in GHz, float32 lanes per vector register, extension name) from /proc/cpuinfo.

    Raises OSError without /proc/cpuinfo and ValueError when it names no clock.
    """
    mhz, flags = 0.0, set()
    with open("/proc/cpuinfo") as info:
        for line in info:
            key, _, value = line.partition(":")
            if key.strip() == "cpu MHz" and not mhz:
                mhz = float(value)
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    if not mhz:
        raise ValueError("/proc/cpuinfo has no 'cpu MHz' line")
    if "avx512f" in flags:
        return mhz / 1e3, 16, "AVX-512"
    if "avx2" in flags and "fma" in flags:
        return mhz / 1e3, 8, "AVX2 + FMA"
    return mhz / 1e3, 4, "SSE"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--fma-units", type=int, default=2, help="FMA pipes per core (2 on recent x86)")
    args = parser.parse_args()
    if args.repeats < 1 or args.fma_units < 1:
        parser.error("--repeats and --fma-units must be at least 1")
    try:
        ghz, lanes, ext = cpu_facts()
    except (OSError, ValueError) as err:
        parser.exit(2, f"cannot work out this CPU's peak: {err}\n")
    threads = torch.get_num_threads()
    per_core = args.fma_units * lanes * 2 * ghz  # GFLOPS
    print(f"torch {torch.__version__}; {ext}, {ghz:.3f} GHz reported, {args.fma_units} FMA units: "
          f"peak {per_core:.1f} GFLOPS per core, {per_core * threads:.1f} on {threads} threads")
    print(f"{'product (rows x in x out)':>50} | {'1 thread':>18} | {f'{threads} threads':>18}")
    for name, (rows, d_in, d_out) in SHAPES.items():
        x, weight, bias = torch.randn(rows, d_in), torch.randn(d_out, d_in), torch.randn(d_out)
        flop = 2 * rows * d_in * d_out  # one multiply and one add per term
        cells = []
        for n in (1, threads):
            torch.set_num_threads(n)
            seconds = medians({"linear": lambda: F.linear(x, weight, bias)}, args.repeats)["linear"]  # (rows, d_out)
            rate = flop / seconds / 1e9
            cells.append(f"{seconds * 1e3:6.2f} ms {rate:4.0f} {100 * rate / (per_core * n):3.0f}%")
        torch.set_num_threads(threads)
        print(f"{f'{name} {rows}x{d_in}x{d_out}':>50} | {cells[0]:>18} | {cells[1]:>18}")
    print("each cell: median time, GFLOPS, share of the peak")


if __name__ == "__main__":
    main()
