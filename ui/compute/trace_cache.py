"""Process-wide bounds for the traces the app runs and keeps (no Streamlit here, so it is testable).

One server process serves every visitor, on a host with well under 1 GB, so two things are bounded:
the traces kept for reuse (``CACHE``, a cachetools LRU that weighs each trace by the tensors it keeps)
and the real passes running at once for many sessions (``GATE``, admitted by their estimated bytes;
a pass larger than the whole gate never gets here: core.trace runs it shape-only on the meta device).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

from cachetools import LRUCache

from core import Trace, TransformerConfig, estimate, trace

CACHE_BYTES = 64 * 2**20  # kept tensors of all cached traces together
GATE_BYTES = 256 * 2**20  # weights and activations of the real passes running at one time


def kept_bytes(t: Trace) -> int:
    """Bytes a kept trace holds on to: its recorded tensors (none after a shape-only pass)."""
    return 0 if t.shape_only else t.estimate.activations


class MemoryGate:
    """Admits work by its estimated bytes so that, together, running work stays under a bound."""

    def __init__(self, max_bytes: int = GATE_BYTES):
        self.max_bytes = max_bytes
        self._in_use = 0
        self._cond = threading.Condition()

    @property
    def in_use(self) -> int:
        return self._in_use

    @contextmanager
    def reserve(self, nbytes: int) -> Iterator[None]:
        """Wait until ``nbytes`` fit beside what is running, hold them, release them in finally."""
        nbytes = min(max(nbytes, 0), self.max_bytes)  # one oversized request still runs, alone
        with self._cond:
            self._cond.wait_for(lambda: self._in_use + nbytes <= self.max_bytes)
            self._in_use += nbytes
        try:
            yield
        finally:
            with self._cond:
                self._in_use -= nbytes
                self._cond.notify_all()


def trace_cache(max_bytes: int = CACHE_BYTES) -> LRUCache:
    """Traces by config, least recently used out first, up to ``max_bytes`` of kept tensors in all."""
    return LRUCache(maxsize=max_bytes, getsizeof=kept_bytes)


CACHE = trace_cache()
GATE = MemoryGate()
_CACHE_LOCK = threading.Lock()  # cachetools' caches are not thread-safe, and every session shares CACHE


def shared_trace(cfg: TransformerConfig, cache: LRUCache = CACHE, gate: MemoryGate = GATE) -> Trace:
    """The trace of ``cfg`` from the cache, or a new pass admitted by the gate and then cached (unless it
    alone would fill the cache)."""
    with _CACHE_LOCK:
        hit = cache.get(cfg)
    if hit is not None:
        return hit
    est = estimate(cfg)
    need = est.total if est.total <= gate.max_bytes else 0  # over it: a shape-only pass, no real memory
    with gate.reserve(need):
        t = trace(cfg, budget_bytes=gate.max_bytes)
    if kept_bytes(t) <= cache.maxsize:
        with _CACHE_LOCK:
            cache[cfg] = t
    return t
