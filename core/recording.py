"""The one point every recorded tensor passes through, and the masking every attention shares.

Kept apart from core.model so that core/experts.py and core/latent_attention.py can use them without
importing core.model, which imports both.
"""

from __future__ import annotations

from typing import MutableMapping

import torch
from torch import Tensor

Recorder = MutableMapping[str, Tensor]


def record(rec: Recorder | None, name: str, tensor: Tensor) -> Tensor:
    """The single point every recorded tensor passes through; returns the tensor unchanged.

    A tensor in a gradient graph is kept detached, so holding it does not hold the graph.
    """
    if rec is not None:
        rec[name] = tensor.detach() if tensor.requires_grad else tensor
    return tensor


def apply_mask(scores: Tensor, mask: Tensor | None) -> Tensor:
    """Blocked pairs (bool True) get -inf, which softmax turns into 0; a float mask is added as it is.

    In place: ``scores`` is a fresh tensor, and a second one of its size would cost memory for nothing.
    """
    if mask is None:
        return scores
    if mask.dtype == torch.bool:
        return scores.masked_fill_(mask, float("-inf"))  # mask broadcasts to (N, nhead, L, S)
    return scores.add_(mask)  # (N, nhead, L, S)
