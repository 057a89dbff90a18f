"""Keep freed memory inside the process between passes, so the next pass does not fault it in again.

A trace allocates a model and keeps tens of MiB of activations. With glibc's adaptive defaults,
much of that memory goes back to the operating system when the trace is dropped, and the next
trace pays a page fault for every 4 KiB it touches: at (N, M, E) = (4, 128, 256) with 6+6 layers
that was about 20,000 faults and a fifth of the trace's time on this machine (the command and
figures are in the README). Pinning glibc's two thresholds at 32 MiB, the upper limit its own
adaptive rule grows them to on 64-bit Linux, keeps that memory mapped:

  M_MMAP_THRESHOLD  blocks of 32 MiB and more get their own mapping, as glibc would do anyway;
  M_TRIM_THRESHOLD  the heap gives memory back only when more than 32 MiB at its top is free.

This is process-wide, so it is done once, at ``import core``. It does nothing on other C
libraries (musl, macOS, Windows), and ``TSE_MALLOC_TUNING=0`` in the environment turns it off.
"""

from __future__ import annotations

import ctypes
import os
import sys

M_TRIM_THRESHOLD = -1  # mallopt parameter numbers, from glibc's malloc.h
M_MMAP_THRESHOLD = -3
KEEP_BYTES = 32 << 20


def tune_malloc() -> bool:
    """Set both thresholds to KEEP_BYTES; True when glibc took them."""
    if os.environ.get("TSE_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(mallopt(M_TRIM_THRESHOLD, KEEP_BYTES)) and bool(mallopt(M_MMAP_THRESHOLD, KEEP_BYTES))


MALLOC_TUNED = tune_malloc()
