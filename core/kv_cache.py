"""Generating with a KV cache: each new token's keys and values are computed once and kept, so a step
runs the model over one position instead of the whole sequence so far.

The cache holds, per layer, K and V of shape (N, nhead_kv, M + t, d_k) after t new tokens: grouped-query
attention (nhead_kv < nhead) shrinks it by nhead / nhead_kv, which is why Llama-2-70B uses it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .config import TransformerConfig
from .model import Transformer, generate_square_subsequent_mask
from .trace import make_batch


@dataclass(frozen=True)
class Generation:
    """What a cached generation did: the tokens (N, M + G), each step's logits for its new position
    (N, vocab_size), and each step's cache shapes, one (K, V) pair of shapes per layer."""

    tokens: Tensor
    step_logits: tuple[Tensor, ...]
    cache_shapes: tuple[tuple[tuple[tuple[int, ...], tuple[int, ...]], ...], ...]


@torch.inference_mode()
def generate(cfg: TransformerConfig, G: int, model: Transformer | None = None,
             prompt: Tensor | None = None) -> Generation:
    """Greedy generation of G tokens after the trace's M-token prompt (or ``prompt``, (N, M)), with a cache.

    Step 0 runs the prompt under the causal mask and fills the cache; each later step feeds the one token
    just chosen, whose query may see every cached key, so it needs no mask.
    """
    if cfg.arch != "decoder-only":
        raise ValueError(f"arch={cfg.arch!r} does not generate token by token; use arch='decoder-only'")
    if not isinstance(G, int) or G < 0:
        raise ValueError(f"G={G!r} must be a whole number of new tokens, 0 or more")
    model = Transformer.from_config(cfg) if model is None else model
    tokens = make_batch(cfg)[0] if prompt is None else prompt  # (N, M)
    cache: list[dict[str, Tensor]] = [{} for _ in range(cfg.layers)]
    new = tokens
    mask = generate_square_subsequent_mask(tokens.shape[1])  # (M, M): the prompt attends causally
    step_logits, shapes = [], []
    for _ in range(G + 1):
        logits = model(None, new, tgt_mask=mask, cache=cache)[:, -1]  # (N, L, vocab_size) -> (N, vocab_size)
        step_logits.append(logits)
        shapes.append(tuple((tuple(c["k"].shape), tuple(c["v"].shape)) for c in cache))  # (N, nhead_kv, M + t, d_k)
        if len(step_logits) > G:
            break
        new = logits.argmax(-1, keepdim=True)  # (N, 1): the next token, greedily
        tokens = torch.cat((tokens, new), dim=1)  # (N, M + t)
        mask = None  # one new query sees every cached key
    return Generation(tokens=tokens, step_logits=tuple(step_logits), cache_shapes=tuple(shapes))
