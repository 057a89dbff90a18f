"""Shape-only passes on the meta device, with repeated calls answered from memory.

PyTorch works out the output of many operators on the meta device in Python, a fraction of a
millisecond per call, and a 96-layer stack makes thousands of identical calls. Inside
``MetaShapeCache`` each call of an operator in ``FRESH`` (they return a new tensor, never a view of
an input) runs PyTorch's own meta kernel once per pass and layout of its arguments; a repeat gets a
new meta tensor of the remembered shape, strides and dtype. Everything else runs as it is.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.nn import functional as F
from torch.overrides import TorchFunctionMode

from .model import Transformer, generate_key_padding_mask, generate_square_subsequent_mask

# Operators whose output is always a new tensor, whose layout depends only on their arguments' layouts.
FRESH = frozenset({
    F.linear, F.layer_norm, F.embedding, torch.softmax, torch.Tensor.softmax, torch.relu, torch.Tensor.relu,
    torch.Tensor.add, torch.Tensor.mul, torch.Tensor.div, torch.Tensor.matmul, torch.Tensor.masked_fill,
    F.rms_norm, F.silu, torch.Tensor.sum, torch.cat, torch.stack, torch.Tensor.neg, torch.Tensor.sin,
    torch.Tensor.cos,
})
# Indexing by a tensor (gathering an expert's tokens) always copies; indexing by slices may return a view.
GATHER = torch.Tensor.__getitem__
# In-place operators return their first argument: once PyTorch has checked a layout, a repeat needs no kernel.
IN_PLACE = frozenset({torch.Tensor.index_add_, torch.Tensor.masked_fill_, torch.Tensor.add_})


def _layout(value: Any) -> Any:
    """A hashable stand-in for one argument: a meta tensor's layout, or the value itself."""
    if isinstance(value, torch.Tensor):
        if not value.is_meta:
            raise TypeError("a real tensor: its operator must really run")
        return value.shape, value.stride(), value.dtype  # torch.Size is a tuple: hashable as it is
    if isinstance(value, (list, tuple)):
        return tuple(map(_layout, value))
    hash(value)  # TypeError for anything that cannot key a cache
    return value


class MetaShapeCache(TorchFunctionMode):
    """Within the block, identical calls of a FRESH (or IN_PLACE) operator on meta tensors run PyTorch's kernel
    only once."""

    def __init__(self):
        super().__init__()
        self.seen: dict[Any, tuple[tuple[int, ...], tuple[int, ...], torch.dtype]] = {}
        self.checked: set[Any] = set()  # in-place calls whose layouts PyTorch has checked

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        gather = func is GATHER and isinstance(args[1], (torch.Tensor, tuple)) and any(
            isinstance(i, torch.Tensor) for i in (args[1] if isinstance(args[1], tuple) else (args[1],)))
        cached = func in FRESH or func in IN_PLACE or gather
        if not cached or torch.is_grad_enabled():  # with gradients, an output needs its graph
            return func(*args, **kwargs)
        try:
            key = (func, _layout(args), _layout(tuple(sorted(kwargs.items()))))
        except TypeError:
            return func(*args, **kwargs)
        if func in IN_PLACE:
            if key not in self.checked:
                func(*args, **kwargs)
                self.checked.add(key)
            return args[0]
        layout = self.seen.get(key)
        if layout is None:
            out = func(*args, **kwargs)
            if type(out) is torch.Tensor:
                self.seen[key] = (tuple(out.shape), out.stride(), out.dtype)
            return out
        shape, stride, dtype = layout
        return torch.empty_strided(shape, stride, dtype=dtype, device="meta")


def warm_up() -> None:
    """Pay PyTorch's one-time cost of a first meta pass now: its Python meta kernels import
    PyTorch's compiler stack (dynamo) and sympy on first use.

    The app calls this once, in the background, so that the first learner to ask for a shape-only
    trace does not wait for those imports.
    """
    model = Transformer(vocab_size=2, E=2, nhead=1, layers=1, device="meta")
    src = torch.zeros(1, 2, dtype=torch.long, device="meta")  # (N, M)
    with torch.inference_mode(), MetaShapeCache():
        padding = generate_key_padding_mask(src)  # (N, M)
        model(src, src, tgt_mask=generate_square_subsequent_mask(2, "meta"), src_key_padding_mask=padding,
              memory_key_padding_mask=padding, rec={})
