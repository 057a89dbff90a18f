"""Generating with a KV cache: each new token's keys and values are computed once and kept, so a step
runs the model over one position instead of the whole sequence so far.

The cache holds, per layer, K and V of shape (N, nhead_kv, M + t, d_k) after t new tokens: grouped-query
attention (nhead_kv < nhead) shrinks it by nhead / nhead_kv, which is why Llama-2-70B uses it. Multi-head
latent attention (DeepSeek) holds the latent (N, M + t, kv_lora_rank) and the shared rotary key
(N, M + t, rope_head_dim) instead, and makes every head's K and V back from them at each step.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .config import TransformerConfig
from .memory import estimate, human_bytes
from .model import Transformer, generate_square_subsequent_mask
from .trace import make_batch

CHECK_BUDGET_BYTES = 32 * 2**20  # a live check's full pass at M + G tokens, weights included
MAX_CHECK_G = 256  # generated tokens a live check runs one by one


@dataclass(frozen=True)
class Generation:
    """What a cached generation did: the tokens (N, M + G), each step's logits for its new position
    (N, vocab_size), and each step's cache shapes, one (K, V) pair of shapes per layer (latent attention's:
    the latent's and the rotary key's)."""

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
        shapes.append(tuple(cache_shapes(c) for c in cache))  # each layer's (K, V) shapes, or (latent, k_rope)
        if len(step_logits) > G:
            break
        new = logits.argmax(-1, keepdim=True)  # (N, 1): the next token, greedily
        tokens = torch.cat((tokens, new), dim=1)  # (N, M + t)
        mask = None  # one new query sees every cached key
    return Generation(tokens=tokens, step_logits=tuple(step_logits), cache_shapes=tuple(shapes))


def cache_shapes(layer_cache: dict[str, Tensor]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """One layer's cached tensors' shapes: K's and V's (N, nhead_kv, S, d_k), or latent attention's latent
    (N, S, kv_lora_rank) and rotary key (N, S, rope_head_dim)."""
    first, second = ("latent", "k_rope") if "latent" in layer_cache else ("k", "v")
    return tuple(layer_cache[first].shape), tuple(layer_cache[second].shape)


@dataclass(frozen=True)
class CacheCheck:
    """Cached generation against full passes, as plain values: the cache's shape after the last step,
    read off the cache itself, and the largest difference between a step's cached logits and the same
    position's logits from one pass over every token without a cache."""

    G: int
    # (layers, 2, N, nhead_kv, M + G, d_k); latent attention's (layers, N, M + G, kv_lora_rank + rope_head_dim)
    cache_shape: tuple[int, ...]
    max_abs_diff: float
    tolerance: float

    @property
    def agree(self) -> bool:
        return self.max_abs_diff <= self.tolerance


CHECK_TOLERANCE = 1e-4  # float32 sums in another order: the same logits differ in their last bits


def room_for(cfg: TransformerConfig, G: int) -> TransformerConfig:
    """The config with a learned positional table long enough for M + G positions (it has max_len rows, one
    per position, and the app sets max_len = M); other positions need no room."""
    if cfg.positional != "learned" or cfg.M + G <= cfg.max_len:
        return cfg
    return cfg.replace(max_len=cfg.M + G)


def check_cache(cfg: TransformerConfig, G: int) -> CacheCheck:
    """Generate G tokens with the cache, then run the whole sequence once without one and compare every step.

    One uncached pass suffices: under the causal mask, position p's logits depend only on tokens up to p,
    so the full pass's logits at M - 1 + t are what step t computed from its cache. A learned positional
    table is given room for the new positions first (``room_for``).
    """
    cfg = room_for(cfg, G)
    model = Transformer.from_config(cfg)
    out = generate(cfg, G, model)
    L = out.tokens.shape[1]  # M + G
    with torch.inference_mode():
        full = model(None, out.tokens, tgt_mask=generate_square_subsequent_mask(L))  # (N, M + G, vocab_size)
    cached = torch.stack(out.step_logits, dim=1)  # (N, G + 1, vocab_size)
    uncached = full[:, cfg.M - 1:]  # (N, G + 1, vocab_size): the positions the steps predicted from
    layers = out.cache_shapes[-1]
    if cfg.attention == "mla":  # the latent (N, M + G, d_c) and rotary key (N, M + G, d_rope), side by side
        (latent, rotary), *_ = layers
        shape = (len(layers), *latent[:-1], latent[-1] + rotary[-1])
    else:
        shape = (len(layers), 2, *layers[0][0])  # K's (N, nhead_kv, M + G, d_k), and V's the same
    return CacheCheck(G=G, cache_shape=shape,
                      max_abs_diff=float((cached - uncached).abs().max()), tolerance=CHECK_TOLERANCE)


def check_refusal(cfg: TransformerConfig, G: int, budget_bytes: int = CHECK_BUDGET_BYTES) -> str | None:
    """Why the live check cannot run for this config and G, in words with the way out; None when it can."""
    if cfg.arch != "decoder-only":
        return f"arch={cfg.arch!r} does not generate token by token; the cache belongs to a decoder-only model"
    if G > MAX_CHECK_G:
        return f"G = {G} new tokens, one step each, is more than the {MAX_CHECK_G} a live check runs; lower G"
    need = estimate(room_for(cfg, G).replace(M=cfg.M + G)).total
    if need > budget_bytes:
        return (f"a full pass over M + G = {cfg.M + G} tokens would hold about {human_bytes(need)}, over the "
                f"{human_bytes(budget_bytes)} a live check may use: the shapes and bytes here are from the formula")
    return None
