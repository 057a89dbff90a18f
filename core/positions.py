"""Where a token sits: the paper's sinusoids, and the rotation RoPE gives queries and keys.

Legend as in core/model.py: L positions, E embedding size, d_k one head's width.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


def sinusoidal_table(L: int, E: int, device: torch.device | str | None = None,
                     dtype: torch.dtype = torch.float32, start: int = 0) -> Tensor:
    """The paper's fixed encoding: PE[pos, 2i] = sin(pos / 10000^(2i/E)), PE[pos, 2i+1] = cos(...).

    Computed for exactly the positions start .. start + L - 1, so the sinusoidal kind has no maximum length.
    """
    position = torch.arange(start, start + L, device=device, dtype=dtype).unsqueeze(1)  # (L, 1)
    rate = torch.exp(torch.arange(0, E, 2, device=device, dtype=dtype) * (-math.log(10000.0) / E))  # (ceil(E/2),)
    angles = position * rate  # (L, ceil(E/2))
    table = torch.empty(L, E, device=device, dtype=dtype)  # (L, E)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles[:, : E // 2])  # odd E has one cosine column fewer
    return table


def rope_angles(L: int, d_k: int, device: torch.device | str | None = None,
                dtype: torch.dtype = torch.float32, start: int = 0, base: float = 10000.0,
                interleaved: bool = False) -> Tensor:
    """RoPE's rotation table: position p turns dimension pair i by p / base^(2i/d_k).

    Laid out as Hugging Face's Llama lays it, the d_k/2 angles twice over (pairs are dimension i and
    i + d_k/2, see ``rotate_half``), so the same weights give the same rotation. ``interleaved`` lays
    each angle out twice in a row instead, for DeepSeek's pairs of neighbours (2i, 2i + 1).
    """
    position = torch.arange(start, start + L, device=device, dtype=dtype).unsqueeze(1)  # (L, 1)
    rate = base ** (-torch.arange(0, d_k, 2, device=device, dtype=dtype) / d_k)  # (d_k/2,)
    angles = position * rate  # (L, d_k/2)
    if interleaved:
        return angles.repeat_interleave(2, dim=-1)  # (L, d_k): a0 a0 a1 a1 ...
    return torch.cat((angles, angles), dim=-1)  # (L, d_k): a0 a1 ... a0 a1 ...


def rotate_half(x: Tensor) -> Tensor:
    """(x1, x2) -> (-x2, x1) on the two halves of the last axis: the 90-degree turn of every pair."""
    x1, x2 = x.chunk(2, dim=-1)  # (..., d_k/2) each
    return torch.cat((-x2, x1), dim=-1)  # (..., d_k)


def rotate_pairs(x: Tensor) -> Tensor:
    """(x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...): the 90-degree turn of neighbouring pairs (DeepSeek's)."""
    pairs = x.unflatten(-1, (-1, 2))  # (..., d/2, 2)
    return torch.stack((-pairs[..., 1], pairs[..., 0]), dim=-1).flatten(-2)  # (..., d)


def apply_rope(x: Tensor, angles: Tensor, interleaved: bool = False) -> Tensor:
    """Turn each position's query or key by its angles: x cos + rotate_half(x) sin, per pair of dimensions.

    The product of a turned query and a turned key depends only on how far apart they are. ``interleaved``
    turns neighbouring pairs, with a table from ``rope_angles(..., interleaved=True)``.
    """
    turn = rotate_pairs(x) if interleaved else rotate_half(x)  # shape unchanged
    return x * angles.cos() + turn * angles.sin()  # (N, heads, L, d_k) with (L, d_k) broadcast

