"""The app's process-wide bounds: the trace cache by bytes kept, the gate by bytes running."""

import threading
import time

from core import TransformerConfig, estimate, trace
from ui.trace_cache import MemoryGate, TraceCache, kept_bytes, shared_trace


def configs(n):
    return [TransformerConfig(N=2, M=8 + i, E=16, nhead=2, vocab_size=100) for i in range(n)]


def test_cache_keeps_at_most_its_bytes_and_evicts_the_oldest():
    cfgs = configs(5)
    traces = [trace(c) for c in cfgs]
    size = kept_bytes(traces[0])
    assert size == estimate(cfgs[0]).activations > 0
    cache = TraceCache(max_bytes=kept_bytes(traces[3]) + kept_bytes(traces[4]) + 1)
    for c, t in zip(cfgs, traces):
        cache.put(c, t)
        assert cache.bytes <= cache.max_bytes
    assert cache.get(cfgs[0]) is None and cache.get(cfgs[4]) is traces[4]
    assert len(cache) == 2


def test_cache_refuses_a_trace_larger_than_itself_and_counts_shape_only_as_free():
    cfg = configs(1)[0]
    cache = TraceCache(max_bytes=10)
    cache.put(cfg, trace(cfg))
    assert len(cache) == 0
    meta = trace(cfg, shape_only=True)
    cache.put(cfg, meta)
    assert cache.get(cfg) is meta and cache.bytes == 0


def test_recently_used_entries_survive_eviction():
    a, b, c = (TransformerConfig(seed=s) for s in range(3))  # same sizes, different weights
    ta, tb, tc = trace(a), trace(b), trace(c)
    cache = TraceCache(max_bytes=kept_bytes(ta) + kept_bytes(tb) + 1)
    cache.put(a, ta)
    cache.put(b, tb)
    assert cache.get(a) is ta  # a is now the most recent
    cache.put(c, tc)
    assert cache.get(a) is ta and cache.get(b) is None


def test_gate_never_admits_more_than_its_bytes_at_once():
    gate = MemoryGate(max_bytes=100)
    peak, lock = [0], threading.Lock()

    def work():
        with gate.reserve(40):
            with lock:
                peak[0] = max(peak[0], gate.in_use)
            time.sleep(0.02)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 80  # two at a time: a third 40 would make 120
    assert gate.in_use == 0


def test_gate_releases_on_error_and_lets_an_oversized_request_run_alone():
    gate = MemoryGate(max_bytes=100)
    try:
        with gate.reserve(50):
            raise RuntimeError("a failing pass")
    except RuntimeError:
        pass
    assert gate.in_use == 0
    with gate.reserve(10**9):
        assert gate.in_use == 100


def test_shared_trace_caches_and_goes_shape_only_over_the_gate():
    cache, gate = TraceCache(), MemoryGate(max_bytes=estimate(configs(1)[0]).total - 1)
    cfg = configs(1)[0]
    t = shared_trace(cfg, cache, gate)
    assert t.shape_only and shared_trace(cfg, cache, gate) is t
    roomy = MemoryGate()
    assert not shared_trace(configs(2)[1], TraceCache(), roomy).shape_only
