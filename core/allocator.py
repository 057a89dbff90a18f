"""Keep freed memory inside the process between passes, so the next pass does not fault it in again.

A trace allocates a model and keeps tens of MiB of activations, then frees it all when the caller
drops the Trace. glibc gives memory back to the operating system once more than its trim
threshold is free at the top of the heap (by default at most 64 MiB, usually far less), and the
next trace then pays a page fault for every 4 KiB it touches again. Tracing (N, M, E) =
(4, 128, 256) with 6+6 layers over and over, that was about 22,000 faults per trace instead of
about 450 on this machine, and the traces were slower (the command and figures are in the
README). So, once, at ``import core``:

  M_TRIM_THRESHOLD = DEFAULT_BUDGET_BYTES (256 MiB): a real trace never holds more than the
      budget, so what one trace frees stays mapped for the next instead of being given back;
  M_MMAP_THRESHOLD = 32 MiB: blocks this large or larger get their own mapping, the upper limit
      glibc's own adaptive rule grows to (setting either threshold turns that rule off).

This is process-wide and does nothing on other C libraries (musl, macOS, Windows).
``TSE_MALLOC_TUNING=0`` in the environment turns it off.
"""

from __future__ import annotations

import ctypes
import os
import sys

from .memory import DEFAULT_BUDGET_BYTES

M_TRIM_THRESHOLD = -1  # mallopt parameter numbers, from glibc's malloc.h
M_MMAP_THRESHOLD = -3
TRIM_BYTES = DEFAULT_BUDGET_BYTES
MMAP_BYTES = 32 << 20


def tune_malloc() -> bool:
    """Set both thresholds; True when glibc took them."""
    if os.environ.get("TSE_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(mallopt(M_TRIM_THRESHOLD, TRIM_BYTES)) and bool(mallopt(M_MMAP_THRESHOLD, MMAP_BYTES))


MALLOC_TUNED = tune_malloc()
