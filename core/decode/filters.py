"""The sampling filters, each a function from logits (N, vocab_size) to logits of the same shape.

They run in Hugging Face's order (temperature, then top-k, then top-p) and, like its logits processors,
remove a token by setting its logit to -inf, so the softmax after them gives it probability 0.
"""

from __future__ import annotations

import math

from torch import Tensor


def check_sampling(temperature: float, top_k: int | None, top_p: float, vocab_size: int) -> None:
    """Raise ValueError naming a bad knob and the values it takes."""
    if not isinstance(temperature, (int, float)) or not (0 < temperature <= 100) or math.isnan(temperature):
        raise ValueError(f"temperature={temperature!r} must be a number above 0 and at most 100; try 1.0 "
                         "(smaller sharpens the distribution, larger flattens it)")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k={top_k!r} must be a whole number of tokens, 1 or more (vocab_size={vocab_size} "
                         "keeps them all)")
    if not isinstance(top_p, (int, float)) or not (0 < top_p <= 1) or math.isnan(top_p):
        raise ValueError(f"top_p={top_p!r} must be a probability above 0 and at most 1; try 0.9 (1 keeps every token)")


def temperature(logits: Tensor, T: float) -> Tensor:
    """Divide by T: below 1 sharpens the distribution (T -> 0 is greedy), above 1 flattens it."""
    return logits / T  # (N, vocab_size)


def top_k(logits: Tensor, k: int) -> Tensor:
    """Keep the k largest logits of each row (and any tied with the k-th); the rest get -inf."""
    k = min(k, logits.shape[-1])
    kth = logits.topk(k, dim=-1).values[..., -1:]  # (N, 1): the k-th largest
    return logits.masked_fill(logits < kth, float("-inf"))  # (N, vocab_size)


def top_p(logits: Tensor, p: float) -> Tensor:
    """Nucleus filtering: keep the most likely tokens whose probabilities first reach p together.

    Sorted from least to most likely, a token goes when the mass at or below it is at most 1 - p, so what
    stays is the smallest set of top tokens holding at least p; the most likely token always stays. How many
    stay depends on the distribution: one when a token is nearly certain, many when the row is flat.
    """
    ascending, order = logits.sort(dim=-1)  # (N, vocab_size), least likely first
    mass_below = ascending.softmax(dim=-1).cumsum(dim=-1)  # (N, vocab_size): the mass at or below each token
    drop = mass_below <= 1 - p  # (N, vocab_size)
    drop[..., -1] = False  # the most likely token always stays
    return logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))  # back in vocabulary order


def filtered(logits: Tensor, T: float = 1.0, k: int | None = None, p: float = 1.0) -> dict[str, Tensor]:
    """Each stage's distribution (N, vocab_size), in order: the model's, after temperature, top-k, top-p."""
    stages = {"probs": logits.softmax(-1)}  # (N, vocab_size)
    logits = temperature(logits, T)
    stages["after temperature"] = logits.softmax(-1)
    if k is not None:
        logits = top_k(logits, k)
    stages["after top-k"] = logits.softmax(-1)
    if p < 1:
        logits = top_p(logits, p)
    stages["after top-p"] = logits.softmax(-1)
    return stages

