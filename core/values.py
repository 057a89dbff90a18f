"""The numbers of a pass, as plain values: whole small tensors, or a slice of a large one, labelled by tokens.

A learner reads the values beside the shapes. A tensor of at most MAX_VALUES elements is shown whole;
of a larger one, the learner picks a batch item and a head and sees its first rows and columns.
"""

from __future__ import annotations

from typing import Any

from torch import Tensor

from .tokens import PAD_TOKEN
from .trace import Trace

SLICE = 16  # rows and columns of a slice, by default


def axes(formula: str) -> list[str]:
    """A shape formula's axis names: '(N, nhead, M_target, M)' -> ['N', 'nhead', 'M_target', 'M']."""
    return [part.strip() for part in formula.strip("() ").split(",") if part.strip()]


def sequence_labels(t: Trace, which: str, item: int) -> list[str]:
    """The tokens of one sequence of the pass, by position: the text's (padding as PAD_TOKEN), else the ids."""
    if t.batch is not None:
        return list(t.batch.tokens("target" if which == "M_target" else "source")[item])
    stack = "tgt" if which == "M_target" or t.config.arch == "decoder-only" else "src"
    ids = t.tensors[f"{stack}.tokens"][item].tolist()
    padding = t.tensors.get("src_key_padding_mask") if stack == "src" else None
    return [PAD_TOKEN if padding is not None and padding[item, i] else str(x) for i, x in enumerate(ids)]


def _labels(t: Trace, axis: str, size: int, item: int) -> list[str]:
    if axis in ("M", "M_target"):
        return sequence_labels(t, axis, item)
    if axis == "vocab_size":
        return list(t.batch.labels) if t.batch is not None else [str(i) for i in range(size)]
    if axis in ("nhead", "nhead_kv"):
        return [f"head {h}" for h in range(size)]
    return [str(i) for i in range(size)]  # a width: E, d_k, d_ff


def value_slice(t: Trace, key: str, item: int = 0, head: int = 0, rows: int = SLICE,
                cols: int = SLICE) -> tuple[list[list[Any]], list[str], list[str]]:
    """One 2-D slice of a row's (or extra's) values, at most ``rows`` x ``cols``, with the labels of its rows and
    columns: tokens along a sequence, the vocabulary's tokens along vocab_size, indices along a width.

    ``item`` picks the batch item (N axis), ``head`` the head (for a per-head row, that head instead of
    the row's own); a KV cache shows layer 0's keys. Raises ValueError for a choice out of range.
    """
    r = t.row(key)
    tensor = t.value(key) if r.head is None else t.tensors[r.hook]
    names = axes(r.formula)
    if r.head is not None:  # the row shows one head of a tensor stacked over heads: put that axis back
        at = 0 if tensor.dim() == 3 else 1  # (nhead, E, d_k) or (N, nhead, ...)
        names.insert(at, "nhead_kv" if tensor.shape[at] == t.config.nhead_kv != t.config.nhead else "nhead")
    return slice_tensor(t, tensor, names, r.name, item, head, rows, cols)


def slice_tensor(t: Trace, tensor: Tensor, names: list[str], what: str, item: int = 0, head: int = 0,
                 rows: int = SLICE, cols: int = SLICE) -> tuple[list[list[Any]], list[str], list[str]]:
    """``value_slice`` for any tensor of the pass whose axes are ``names`` (the learner's symbols)."""
    names = list(names)
    if tensor.dim() == 0:
        return [[tensor.item()]], [what], [""]
    picks = {"N": item, "nhead": head, "nhead_kv": head, "layers": 0, "2": 0}
    for axis in list(names):
        if axis not in picks or len(names) <= 1:
            continue
        i = names.index(axis)
        size = tensor.shape[i]
        if not 0 <= picks[axis] < size:
            pick = "item" if axis == "N" else "head" if axis.startswith("nhead") else axis
            raise ValueError(f"{pick}={picks[axis]} is out of range for {what}: it has {size} ({axis}={size})")
        tensor = tensor.select(i, picks[axis])
        names.pop(i)
    if tensor.dim() == 1:
        label = f"sequence {item}" if names[0] in ("M", "M_target") else what
        return [tensor[:cols].tolist()], [label], _labels(t, names[0], tensor.shape[0], item)[:cols]
    row_labels = _labels(t, names[0], tensor.shape[0], item)[:rows]
    col_labels = _labels(t, names[1], tensor.shape[1], item)[:cols]
    return tensor[:rows, :cols].tolist(), row_labels, col_labels
