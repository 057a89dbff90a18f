"""oneDNN's linear kernel for a pass's large products: whether core uses it, and the bounds of its caches.

Why: PyTorch's F.linear multiplies float32 matrices with MKL, and on the CPU measured (AMD EPYC,
AVX-512, 2 threads) oneDNN's fused kernel (torch.ops.mkldnn._linear_pointwise, the one
torch.compile's CPU backend calls) did the linear-layer products of the benchmark's largest size
in 0.58-0.87 of F.linear's time, and whole traces there in 0.91-0.92 of it. It adds the bias inside
the product, where F.linear first copies the bias into the output. Small products lose: with every
product on oneDNN, a trace at the smallest size took 1.28-1.30 of the time, so only products of at
least MIN_MACS multiply-adds go to it (the benchmark's medium size then breaks even, 0.97-1.01).
``python bench/linear_kernels.py`` measures all of this; ``core.model.linear`` makes the choice.

Its cost is memory. For every new shape of product oneDNN keeps a compiled kernel (its primitive
cache) and PyTorch's oneDNN layer, ideep, an entry of its own (its LRU cache), each up to 1,024
entries by default: one product of each of 150 new shapes grew a process by 93-111 MiB, against
16-20 MiB with F.linear, and tracing 150 random configs then grew it by 450-471 MiB, 236-253 MiB of
that still in use after glibc's malloc_trim, against 106-186 MiB. Both caches read their capacity
from the environment when first used, not when PyTorch is imported, so this module sets both to
ENTRIES before its own first oneDNN call, even in a process that imported PyTorch first; a value
already in the environment wins. One trace meets about a dozen shapes at most, so 16 entries hold
a pass, and an evicted shape costs one kernel build when next met. With 16, the same runs grew by
20-28 MiB and 108-187 MiB, and peaked 3 MiB lower to 31 MiB higher than with F.linear (six runs of
``--memory``). A process that ran oneDNN operators before importing core keeps the cache sizes it
started with.

TSE_ONEDNN=0 in the environment turns it off; the app's server does (streamlit_app.py).
"""

from __future__ import annotations

import os

ENTRIES = 16  # each cache's capacity, unless the environment already sets one
MIN_MACS = 20_000_000  # products of at least this many multiply-adds go to oneDNN

WANTED = os.environ.get("TSE_ONEDNN", "1") != "0"
if WANTED:
    for _name in ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY"):
        os.environ.setdefault(_name, str(ENTRIES))

import torch  # noqa: E402  (after the capacities: the probe below is this process's first oneDNN call, unless
from torch.nn import functional as F  # noqa: E402  something imported before core made one)


def _kernel_works() -> bool:
    """Whether this PyTorch build has the kernel and it gives F.linear's answer on a tiny product.

    It is a private operator, present in the x86 and ARM wheels of PyTorch 2.x; a build without it,
    or one where it has changed, keeps F.linear for every product.
    """
    if not torch.backends.mkldnn.is_available():
        return False
    try:
        x, w, b = torch.ones(2, 3), torch.ones(4, 3), torch.ones(4)  # (2, 3) @ (3, 4) + (4,) -> (2, 4)
        return bool(torch.equal(torch.ops.mkldnn._linear_pointwise(x, w, b, "none", [], ""), F.linear(x, w, b)))
    except (AttributeError, RuntimeError):
        return False


LINEAR = WANTED and _kernel_works()  # what core.model.linear reads, at every call
