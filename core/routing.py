"""What the router did in one pass, cut for drawing: each token's probabilities over the experts, its top_k
choices, and how many tokens each expert got (core.experts records them for the first layer with experts).

How many tokens an expert gets is the one shape in the model that the data decides. A shape-only pass has no
data: its counts are unknown, and only the even share N·M·top_k / n_experts can be said.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .trace import Trace

MAX_TOKENS_DRAWN = 64  # rows of the heatmap: tokens of one sequence
MAX_EXPERTS_DRAWN = 64  # columns: experts


@dataclass(frozen=True)
class RoutingView:
    """One sequence's routing in the first layer with experts, and every expert's count over the whole batch.

    ``probs``, ``chosen`` and ``counts`` are None after a shape-only pass, which computed nothing."""

    layer: int  # the first layer with experts (from 0)
    item: int  # the sequence drawn
    tokens: int  # its length, M
    n_experts: int
    top_k: int
    even_share: float  # N·M·top_k / n_experts: each expert's count if the router spread the tokens evenly
    probs: list[list[float]] | None = None  # (rows, columns): softmax over the router's logits
    chosen: list[list[int]] | None = None  # (rows, top_k): each token's experts, best first
    counts: list[int] | None = None  # (n_experts,): tokens per expert over all N·M tokens

    @property
    def known(self) -> bool:
        return self.counts is not None

    @property
    def rows(self) -> int:
        return len(self.probs) if self.probs is not None else 0

    @property
    def columns(self) -> int:
        return len(self.probs[0]) if self.probs else 0


def routing_view(t: Trace, item: int = 0, max_tokens: int = MAX_TOKENS_DRAWN,
                 max_experts: int = MAX_EXPERTS_DRAWN) -> RoutingView:
    """The router's probabilities and choices for sequence ``item`` (its first ``max_tokens`` tokens and first
    ``max_experts`` experts), and the batch's tokens per expert."""
    cfg = t.config
    if not cfg.moe:
        raise ValueError(f"n_experts={cfg.n_experts}: a dense FFN has no router; set n_experts to see routing")
    if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < cfg.N:
        raise ValueError(f"item={item!r} must be a sequence of the batch, 0 to {cfg.N - 1}")
    base = RoutingView(cfg.first_dense_layers, item, cfg.M, cfg.n_experts, cfg.top_k,
                       cfg.N * cfg.M * cfg.top_k / cfg.n_experts)
    if t.shape_only:
        return base
    logits = t.value("router_logits")[item, :max_tokens].float()  # (rows, n_experts)
    probs = torch.softmax(logits, dim=-1)[:, :max_experts]  # (rows, columns): softmax over all the experts
    chosen = t.value("top_k_experts")[item, :max_tokens]  # (rows, top_k)
    return RoutingView(base.layer, item, base.tokens, base.n_experts, base.top_k, base.even_share,
                       probs.tolist(), chosen.tolist(), t.value("tokens_per_expert").tolist())
