"""Fast shape inference on the meta device: worked-out rules first, then remembered answers.

PyTorch's meta kernels are mostly Python and cost 0.1-2 ms per call; a 96-layer stack makes
thousands of identical calls, and the first call in a process imports torch._dynamo and sympy
(over a second). So each operator is first offered to ``core.shape_rules``, which works the
output's layout out directly for the operators the model uses. Anything else runs PyTorch's own
kernel once per (operator, input layouts) within a pass: an output's shape, strides and dtype
depend only on those, so later identical calls get a fresh meta tensor of the remembered layout.
Views and in-place operators without a rule alias their inputs, so they always run for real
(they are cheap on meta).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .shape_rules import RULES


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
    """A dispatch mode for meta-only passes: operators with a rule are answered by it, and
    identical calls of the others from memory."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """False: leave ``__torch_dispatch__`` as written.

        By default TorchDispatchMode wraps a subclass's ``__torch_dispatch__`` in
        ``torch._disable_dynamo``, so that torch.compile does not trace into it. That wrapper
        imports torch._dynamo on its first call (about a second in a fresh process), and a
        shape-only pass must not need that import. Nothing here runs under torch.compile, so the
        wrapper has nothing to do; PyTorch's own docstring for this method shows this override.
        """
        return False

    def __init__(self):
        super().__init__()
        self._seen: dict[Any, Any] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        rule = RULES.get(func)
        if rule is not None:  # worked out without PyTorch's Python meta kernels (core.shape_rules)
            out = rule(*args, **kwargs)
            if out is not None:
                return out
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
