"""Fast shape inference on the meta device, by remembering what each operator returned.

PyTorch's meta kernels are mostly Python and cost 0.1-2 ms per call; a 96-layer stack makes
thousands of identical calls. An operator's output shape, strides and dtype depend only on its
inputs' shapes, strides and dtypes and its other arguments, so within one pass we remember the
answer per (operator, inputs) and hand out a fresh meta tensor of that layout. Views and in-place
operators alias their inputs, so they always run for real (they are cheap on meta).
"""

from __future__ import annotations

import importlib
import sys
import threading
from functools import lru_cache
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode


def _describe(value: Any) -> Any:
    """A hashable stand-in for one argument: a tensor's layout, or the value itself."""
    if isinstance(value, torch.Tensor):
        if value.device.type != "meta":
            raise TypeError  # a real tensor: its operator must really run
        return ("T", tuple(value.shape), tuple(value.stride()), value.dtype)
    if isinstance(value, (list, tuple)):
        return tuple(_describe(v) for v in value)
    if isinstance(value, (int, float, bool, str, type(None), torch.dtype, torch.device, torch.layout,
                          torch.memory_format)):
        return value
    raise TypeError  # anything else: not safe to key on, run the operator itself


class _Layout:
    """Shape, strides and dtype of an output; a plain class, so pytree leaves it whole."""

    __slots__ = ("shape", "stride", "dtype")

    def __init__(self, t: torch.Tensor):
        self.shape, self.stride, self.dtype = tuple(t.shape), tuple(t.stride()), t.dtype

    def new(self) -> torch.Tensor:
        return torch.empty_strided(self.shape, self.stride, dtype=self.dtype, device="meta")


@lru_cache(maxsize=None)
def _aliases(func) -> bool:
    """True for views and in-place operators: their outputs share memory with an input."""
    schema = func._schema
    return any(r.alias_info is not None for r in schema.returns) or \
        any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


class MetaShapeCache(TorchDispatchMode):
    """A dispatch mode for meta-only passes: identical operator calls are answered from memory."""

    def __init__(self):
        super().__init__()
        self._seen: dict[Any, Any] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _aliases(func):
            return func(*args, **kwargs)
        try:
            key = (func, _describe(args), _describe(tuple(sorted(kwargs.items()))))
            hash(key)
        except TypeError:  # an argument we cannot key on safely: run the operator itself
            return func(*args, **kwargs)
        layout = self._seen.get(key)
        if layout is None:
            out = func(*args, **kwargs)
            if isinstance(out, torch.Tensor):
                self._seen[key] = _Layout(out)
            elif isinstance(out, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in out):
                self._seen[key] = tuple(_Layout(t) for t in out)
            return out
        if isinstance(layout, _Layout):
            return layout.new()
        return tuple(d.new() for d in layout)


_warm_up_lock = threading.Lock()
_warm_up_thread: threading.Thread | None = None


def warm_up_in_background() -> threading.Thread | None:
    """Pay PyTorch's one-time cost of a first meta pass now, on a daemon thread; once per process.

    On the meta device most elementwise operators are Python references that PyTorch wraps in
    ``torch._dynamo.disable``; the first call of such a wrapper imports torch._dynamo, which takes
    about a second. A server calls this after its first page is drawn, so that a learner's first
    GPT-3-sized trace takes the time of the trace, not of that import. Returns the thread (None
    when there is nothing left to do).
    """
    global _warm_up_thread
    with _warm_up_lock:
        if _warm_up_thread is None and "torch._dynamo" not in sys.modules:
            _warm_up_thread = threading.Thread(target=importlib.import_module, args=("torch._dynamo",),
                                               name="meta-warm-up", daemon=True)
            _warm_up_thread.start()
        return _warm_up_thread
