"""The sliding window of Mistral, Gemma and GPT-OSS: a band mask over the causal one.

A windowed layer lets a query see at most the last ``window`` positions, itself included, so its cost and its
cache stop growing with the sequence. The layers (core/model.py) take the mask as they take the causal one.
"""

from __future__ import annotations

import torch
from torch import Tensor


def sliding_window_mask(L: int, S: int, window: int, device: torch.device | str | None = None) -> Tensor:
    """Band mask (L, S): True where blocked, for L queries that are the last L of S consecutive positions
    (a cache's keys come first). A query sees at most the last ``window`` positions, itself included, as
    Hugging Face's Mistral does: key j is blocked when it is later than the query or ``window`` or more behind.
    """
    q = torch.arange(S - L, S, device=device)[:, None]  # (L, 1): the queries' positions among the keys
    k = torch.arange(S, device=device)[None, :]  # (1, S)
    return (k > q) | (q - k >= window)  # (L, S)
