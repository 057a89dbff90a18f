"""The one point every recorded tensor passes through, shared by core/model.py and core/experts.py."""

from __future__ import annotations

from typing import MutableMapping

from torch import Tensor

Recorder = MutableMapping[str, Tensor]


def record(rec: Recorder | None, name: str, tensor: Tensor) -> Tensor:
    """The single point every recorded tensor passes through; returns the tensor unchanged.

    A tensor in a gradient graph is kept detached, so holding it does not hold the graph.
    """
    if rec is not None:
        rec[name] = tensor.detach() if tensor.requires_grad else tensor
    return tensor
