"""The app's process-wide bounds: the trace cache by bytes kept, the gate by bytes running."""

import threading
import time

from core import TransformerConfig, estimate, trace
from ui.compute.trace_cache import MemoryGate, kept_bytes, shared_trace, trace_cache


def configs(n):
    return [TransformerConfig(N=2, M=8 + i, E=16, nhead=2, vocab_size=100) for i in range(n)]


def test_the_cache_weighs_a_trace_by_the_tensors_it_keeps_and_a_shape_only_one_as_nothing():
    cfg = configs(1)[0]
    assert kept_bytes(trace(cfg)) == estimate(cfg).activations > 0
    assert kept_bytes(trace(cfg, shape_only=True)) == 0


def test_shared_traces_stay_within_the_caches_bytes_and_the_least_recently_used_go_first():
    cfgs = configs(4)
    sizes = [estimate(c).activations for c in cfgs]
    cache = trace_cache(max_bytes=sizes[1] + sizes[2] + 1)
    first = shared_trace(cfgs[0], cache, MemoryGate())
    shared_trace(cfgs[1], cache, MemoryGate())
    assert shared_trace(cfgs[0], cache, MemoryGate()) is first  # used again: now the most recent
    shared_trace(cfgs[2], cache, MemoryGate())
    assert cfgs[0] in cache and cfgs[1] not in cache and cache.currsize <= cache.maxsize


def test_a_trace_larger_than_the_whole_cache_is_returned_but_not_kept():
    cfg = configs(1)[0]
    cache = trace_cache(max_bytes=10)
    assert not shared_trace(cfg, cache, MemoryGate()).shape_only
    assert cfg not in cache


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
    cache, gate = trace_cache(), MemoryGate(max_bytes=estimate(configs(1)[0]).total - 1)
    cfg = configs(1)[0]
    t = shared_trace(cfg, cache, gate)
    assert t.shape_only and shared_trace(cfg, cache, gate) is t
    assert not shared_trace(configs(2)[1], trace_cache(), MemoryGate()).shape_only
