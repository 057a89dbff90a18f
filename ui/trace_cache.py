"""Process-wide bounds for the traces the app runs and keeps (no Streamlit here, so it is testable).

One server process serves every visitor, and Community Cloud gives it well under 1 GB. Two things
could grow without bound: traces kept for reuse, and forward passes running at once for many
sessions. This module bounds both:

- ``TraceCache`` keeps recent traces, least recently used first out, up to ``max_bytes`` of kept
  tensors in total (``Trace.estimate.activations`` counts them exactly; the weights are freed when
  a pass ends).
- ``MemoryGate`` lets a real pass start only while the passes already running, plus this one,
  stay within ``max_bytes`` by their estimates; the others wait their turn. A pass larger than
  the whole gate never gets here: core.trace runs it shape-only on the meta device.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import contextmanager
from typing import Iterator

from core import Trace, TransformerConfig, estimate, trace

CACHE_BYTES = 64 * 2**20  # kept tensors of all cached traces together
GATE_BYTES = 256 * 2**20  # weights and activations of the real passes running at one time


def kept_bytes(t: Trace) -> int:
    """Bytes a kept trace holds on to: its recorded tensors (none after a shape-only pass)."""
    return 0 if t.shape_only else t.estimate.activations


class TraceCache:
    """An LRU of traces keyed by config, bounded by the bytes of the tensors they keep."""

    def __init__(self, max_bytes: int = CACHE_BYTES):
        self.max_bytes = max_bytes
        self._items: OrderedDict[TransformerConfig, Trace] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def get(self, cfg: TransformerConfig) -> Trace | None:
        with self._lock:
            t = self._items.get(cfg)
            if t is not None:
                self._items.move_to_end(cfg)
            return t

    def put(self, cfg: TransformerConfig, t: Trace) -> None:
        """Keep ``t`` unless it alone is over the bound; evict the oldest until it fits."""
        size = kept_bytes(t)
        if size > self.max_bytes:
            return
        with self._lock:
            if cfg in self._items:
                self._bytes -= kept_bytes(self._items.pop(cfg))
            while self._items and self._bytes + size > self.max_bytes:
                _, old = self._items.popitem(last=False)
                self._bytes -= kept_bytes(old)
            self._items[cfg] = t
            self._bytes += size

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


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


CACHE = TraceCache()
GATE = MemoryGate()


def shared_trace(cfg: TransformerConfig, cache: TraceCache = CACHE, gate: MemoryGate = GATE) -> Trace:
    """The trace of ``cfg`` from the cache, or a new pass admitted by the gate and then cached."""
    hit = cache.get(cfg)
    if hit is not None:
        return hit
    est = estimate(cfg)
    need = est.total if est.total <= gate.max_bytes else 0  # over it: a shape-only pass, no real memory
    with gate.reserve(need):
        t = trace(cfg, budget_bytes=gate.max_bytes)
    cache.put(cfg, t)
    return t
