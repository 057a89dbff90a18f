"""Output layouts worked out by hand for the operators a shape-only pass runs.

Why this exists: in PyTorch 2.13 the meta kernels of most operators are Python references. Most
are wrapped in ``torch._disable_dynamo``, whose first call imports torch._dynamo (about a second
and 70 MiB), and several import sympy (half a second). So the first shape-only trace in a fresh
process, a CLI run say, took over a second at GPT-3 sizes, several times the second one. The
layout of an output (shape, strides, dtype) follows from its inputs' layouts by simple rules, so
for the operators ``core.model`` uses, and those PyTorch's own encoder layer uses when a quiz asks
it for shapes (``quizzes.experiments.batch_first``), we apply them here.

Each rule returns a fresh meta tensor, or None for any argument pattern it does not cover; the
caller then runs PyTorch's own kernel, so an unusual call costs time, never a wrong answer.
tests/core/test_shape_rules.py checks every rule against PyTorch's kernels.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

aten = torch.ops.aten

Rule = Callable[..., "Tensor | None"]


def _meta_tensors(args) -> list[Tensor] | None:
    """The tensor arguments, or None when one is not on the meta device."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    return tensors if all(t.device.type == "meta" for t in tensors) else None


def _broadcast(*shapes) -> tuple[int, ...] | None:
    """The shape that ``shapes`` broadcast to, or None when they do not.

    Written out because torch.broadcast_shapes goes through PyTorch's symbolic-shape module,
    whose first use imports sympy (half a second).
    """
    out = []
    for i in range(max(len(s) for s in shapes), 0, -1):  # aligned from the right
        sizes = {s[-i] for s in shapes if len(s) >= i} - {1}
        if len(sizes) > 1:
            return None
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _dense_permuted(t: Tensor) -> bool:
    """True when t's elements fill one block of memory exactly once, in some order of its dims.

    A transposed view of a contiguous tensor is such a block; PyTorch's elementwise kernels then
    give their output the input's strides. A size-1 dimension's stride is arbitrary and nothing
    depends on it, so it is not checked (and the output keeps the input's). Empty tensors are left
    to PyTorch.
    """
    expected = 1
    for size, stride in sorted(zip(t.shape, t.stride()), key=lambda pair: pair[1]):
        if size == 0:
            return False
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def _contiguous(shape, dtype: torch.dtype) -> Tensor:
    """A fresh contiguous meta tensor: the layout most of these operators give their output."""
    return torch.empty(tuple(shape), dtype=dtype, device="meta")


def _dense_in_stride_order(t: Tensor, dtype: torch.dtype) -> Tensor | None:
    """A dense meta tensor shaped like t, its dims laid out in the order of t's strides (the
    smallest stride innermost), or None when that order is not clear.

    This is the layout PyTorch's elementwise kernels give the output of a slice with gaps, such as
    one of q, k and v split off the stacked attention projection. (torch.empty_like works it out
    too, but on the meta device through Python code that imports sympy.) The order is clear when
    the dims longer than 1 have distinct, nonzero strides; a size-1 dim's stride is arbitrary.
    """
    long_strides = [stride for size, stride in zip(t.shape, t.stride()) if size > 1]
    if t.numel() == 0 or 0 in long_strides or len(set(long_strides)) < len(long_strides):
        return None
    strides = [0] * t.dim()
    step = 1
    for dim in sorted(range(t.dim()), key=t.stride):  # innermost first
        strides[dim] = step
        step *= t.shape[dim]
    return torch.empty_strided(tuple(t.shape), tuple(strides), dtype=dtype, device="meta")


def _elementwise(args, dtype: torch.dtype) -> Tensor | None:
    """Broadcast shape; contiguous when every tensor input is, else as laid out for a lone input.

    A lone input that is a dense block (in some order of its dims) gives its output its strides; a
    lone input with gaps, a slice, gives a dense output with its dims in the same order of stride.
    """
    tensors = _meta_tensors(args)
    if not tensors:
        return None
    if all(t.is_contiguous() for t in tensors):
        shape = _broadcast(*(tuple(t.shape) for t in tensors))
        return None if shape is None else _contiguous(shape, dtype)
    if len(tensors) == 1 and _dense_permuted(tensors[0]):
        return torch.empty_strided(tensors[0].shape, tensors[0].stride(), dtype=dtype, device="meta")
    if len(tensors) == 1:
        return _dense_in_stride_order(tensors[0], dtype)
    return None


def _binary(self, other, alpha=None) -> Tensor | None:
    """add, sub, mul: the promoted dtype of the two operands (a scaled ``alpha`` is left to PyTorch)."""
    if alpha is not None:
        return None
    return _elementwise((self, other), torch.result_type(self, other))


def _true_divide(self, other) -> Tensor | None:
    """div: integer operands would promote to the default float; left to PyTorch."""
    dtype = torch.result_type(self, other)
    return _elementwise((self, other), dtype) if dtype.is_floating_point else None


def _float_unary(self) -> Tensor | None:
    """exp, sin, cos of a floating tensor: same dtype (integer input is left to PyTorch)."""
    return _elementwise((self,), self.dtype) if self.dtype.is_floating_point else None


def _same_dtype_unary(self) -> Tensor | None:
    """relu: same dtype."""
    return _elementwise((self,), self.dtype)


def _scalar(self, other) -> Tensor | None:
    """mul by a number (the Scalar overload): the promoted dtype."""
    return _elementwise((self,), torch.result_type(self, other))


def _compare_scalar(self, other) -> Tensor | None:
    """eq against a number: a bool tensor of the same shape."""
    return _elementwise((self,), torch.bool)


def _linear(x, weight, bias=None) -> Tensor | None:
    """(..., in_features) @ weight.T + bias -> (..., out_features), contiguous whatever x's layout:
    PyTorch folds a non-contiguous x into rows (copying it) before the product. With d_k = 1 the
    concatenated heads reach W^O as such a view."""
    if _meta_tensors((x, weight, bias)) is None or x.dim() < 1 or weight.dim() != 2:
        return None
    if x.shape[-1] != weight.shape[1] or x.dtype != weight.dtype:
        return None
    if bias is not None and (tuple(bias.shape) != (weight.shape[0],) or bias.dtype != x.dtype):
        return None
    return _contiguous((*x.shape[:-1], weight.shape[0]), x.dtype)  # (..., out_features)


def _addmm(bias, a, b, beta=1, alpha=1) -> Tensor | None:
    """bias + (n, m) @ (m, p) -> (n, p), contiguous: nn.Linear inside PyTorch's own layers."""
    if _meta_tensors((bias, a, b)) is None or a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        return None
    if not a.dtype == b.dtype == bias.dtype:
        return None
    shape = (a.shape[0], b.shape[1])
    if _broadcast(tuple(bias.shape), shape) != shape:
        return None
    return _contiguous(shape, a.dtype)  # (n, p)


def _bmm(a, b) -> Tensor | None:
    """(B, n, m) @ (B, m, p) -> (B, n, p), contiguous whatever the inputs' strides."""
    if _meta_tensors((a, b)) is None or a.dim() != 3 or b.dim() != 3 or a.dtype != b.dtype:
        return None
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        return None
    return _contiguous((a.shape[0], a.shape[1], b.shape[2]), a.dtype)  # (B, n, p)


def _layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True) -> Tensor | None:
    """Same shape as a contiguous input."""
    if _meta_tensors((x, weight, bias)) is None or not x.is_contiguous():
        return None
    n = len(normalized_shape)
    if n == 0 or n > x.dim() or tuple(x.shape[x.dim() - n:]) != tuple(normalized_shape):
        return None
    if any(p is not None and (tuple(p.shape) != tuple(normalized_shape) or p.dtype != x.dtype)
           for p in (weight, bias)):
        return None
    return _contiguous(x.shape, x.dtype)


def _softmax(x, dim, dtype=None) -> Tensor | None:
    """Same shape and dtype as a floating input, contiguous whatever the input's strides."""
    if _meta_tensors((x,)) is None or not x.dtype.is_floating_point or dtype not in (None, x.dtype):
        return None
    if not -max(x.dim(), 1) <= dim < max(x.dim(), 1):
        return None
    return _contiguous(x.shape, x.dtype)


def _safe_softmax(x, dim, dtype=None) -> Tensor | None:
    """PyTorch's attention softmax (rows blocked entirely become zeros): same layout as softmax's."""
    return _softmax(x, dim, dtype) if x.is_contiguous() else None


def _native_layer_norm(x, normalized_shape, weight, bias, eps) -> tuple[Tensor, Tensor, Tensor] | None:
    """Output like a contiguous float32/float64 input; the mean and 1/std keep the normalised
    dimensions as size 1: (*leading, 1, ..., 1)."""
    if x.dtype not in (torch.float32, torch.float64) or _layer_norm(x, normalized_shape, weight, bias) is None:
        return None
    n = len(normalized_shape)
    stats = (*x.shape[:x.dim() - n], *(1,) * n)  # (*leading, 1, ..., 1)
    return _contiguous(x.shape, x.dtype), _contiguous(stats, x.dtype), _contiguous(stats, x.dtype)


def _triu(x, diagonal=0) -> Tensor | None:
    """Same shape as a contiguous input of two or more dimensions."""
    if _meta_tensors((x,)) is None or x.dim() < 2 or not x.is_contiguous():
        return None
    return _contiguous(x.shape, x.dtype)


def _stack(tensors, dim=0) -> Tensor | None:
    """k tensors of one shape -> a new dimension of size k at ``dim``, contiguous."""
    tensors = list(tensors)
    if not tensors or _meta_tensors(tensors) is None:
        return None
    shape, dtype = tuple(tensors[0].shape), tensors[0].dtype
    if any(tuple(t.shape) != shape or t.dtype != dtype for t in tensors):
        return None
    if not -len(shape) - 1 <= dim <= len(shape):
        return None
    dim %= len(shape) + 1
    return _contiguous((*shape[:dim], len(tensors), *shape[dim:]), dtype)


def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False) -> Tensor | None:
    """Integer ids (...) into a (rows, width) table -> (..., width), contiguous."""
    if _meta_tensors((weight, indices)) is None or weight.dim() != 2:
        return None
    if indices.dtype not in (torch.int32, torch.int64):
        return None
    return _contiguous((*indices.shape, weight.shape[1]), weight.dtype)  # (..., width)


def _on_meta(kwargs) -> bool:
    """A factory call for an ordinary (strided) tensor on the meta device."""
    strided = kwargs.get("layout") in (None, torch.strided)
    return strided and torch.device(kwargs.get("device") or "cpu").type == "meta"


def _arange(start, end=None, step=1, **kwargs) -> Tensor | None:
    """arange(end) and arange(start, end, step) with whole-number bounds."""
    if end is None:
        start, end = 0, start
    if not _on_meta(kwargs) or not all(type(v) is int for v in (start, end, step)):
        return None
    if step == 0 or (end - start) * step < 0:  # PyTorch refuses these with its own message
        return None
    dtype = kwargs.get("dtype") or torch.int64
    return _contiguous((len(range(start, end, step)),), dtype)


def _filled(size, **kwargs) -> Tensor | None:
    """zeros and ones: a contiguous tensor of ``size``."""
    if not _on_meta(kwargs):
        return None
    return _contiguous(size, kwargs.get("dtype") or torch.get_default_dtype())


def _empty_like(x, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None) -> Tensor | None:
    """A new tensor laid out like a dense input (PyTorch's default), or contiguous when asked."""
    if _meta_tensors((x,)) is None or layout not in (None, torch.strided):
        return None
    if device is not None and torch.device(device).type != "meta":
        return None
    dtype = dtype or x.dtype
    if memory_format == torch.contiguous_format:
        return _contiguous(x.shape, dtype)
    if memory_format in (None, torch.preserve_format) and _dense_permuted(x):
        return torch.empty_strided(x.shape, x.stride(), dtype=dtype, device="meta")
    return None


def _add_in_place(self, other, alpha=None) -> Tensor | None:
    """``self += other``: self itself, when other broadcasts to it and its dtype can hold the sum."""
    if alpha is not None or _meta_tensors((self, other)) is None:
        return None
    other_shape = tuple(other.shape) if isinstance(other, Tensor) else ()
    if _broadcast(tuple(self.shape), other_shape) != tuple(self.shape):
        return None
    return self if torch.can_cast(torch.result_type(self, other), self.dtype) else None


def _divide_in_place_by_number(self, other) -> Tensor | None:
    """``self /= number`` (dropout's rescale inside PyTorch's layers): self itself, when float."""
    if _meta_tensors((self,)) is None or not self.dtype.is_floating_point:
        return None
    return self


def _masked_fill_in_place(self, mask, value) -> Tensor | None:
    """``self.masked_fill_(mask, value)``: self itself, when the bool mask broadcasts to it."""
    if _meta_tensors((self, mask)) is None or mask.dtype != torch.bool:
        return None
    return self if _broadcast(tuple(self.shape), tuple(mask.shape)) == tuple(self.shape) else None


RULES: dict[object, Rule] = {
    aten.add.Tensor: _binary,
    aten.sub.Tensor: _binary,
    aten.mul.Tensor: _binary,
    aten.mul.Scalar: _scalar,
    aten.div.Tensor: _true_divide,
    aten.exp.default: _float_unary,
    aten.sin.default: _float_unary,
    aten.cos.default: _float_unary,
    aten.relu.default: _same_dtype_unary,
    aten.eq.Scalar: _compare_scalar,
    aten.linear.default: _linear,
    aten.addmm.default: _addmm,
    aten.bmm.default: _bmm,
    aten.layer_norm.default: _layer_norm,
    aten.native_layer_norm.default: _native_layer_norm,
    aten.softmax.int: _softmax,
    aten._safe_softmax.default: _safe_softmax,
    aten.triu.default: _triu,
    aten.stack.default: _stack,
    aten.embedding.default: _embedding,
    aten.arange.default: _arange,
    aten.arange.start_step: _arange,
    aten.zeros.default: _filled,
    aten.ones.default: _filled,
    aten.empty_like.default: _empty_like,
    aten.add_.Tensor: _add_in_place,
    aten.div_.Scalar: _divide_in_place_by_number,
    aten.masked_fill_.Scalar: _masked_fill_in_place,
}
"""Operator -> rule. Called with the operator's own arguments; None means "ask PyTorch"."""
