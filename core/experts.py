"""A mixture of experts: the FFN of Mixtral, Qwen3-MoE and DeepSeek, beside the dense FeedForward.

A router scores every token against ``n_experts`` experts, each an FFN of width ``d_ff_expert``; each token
goes through its ``top_k`` best and gets their outputs, weighted by the router. So a token touches
top_k / n_experts of the expert weights: Mixtral holds 8 experts and runs 2 of them. Shared experts, when
there are any, read every token (DeepSeek's); their n_shared_experts FFNs of width d_ff_expert are one FFN
of width n_shared_experts · d_ff_expert, as Hugging Face builds them, which computes the same sum.

This is the one place in the model where a shape depends on the data: how many tokens an expert gets,
T_e, is decided by the router. On PyTorch's meta device there are no values to decide with, so each expert
is given the even share, ceil(N·M·top_k / n_experts) rows, and the counts themselves are unknown.

DeepSeek-V3 scores experts with a sigmoid plus a learned bias and picks them within groups; the softmax
here is Mixtral's, Qwen3's and DeepSeek-V2's. The parameters are the same either way.

Legend, as in core/model.py, and: T = N·M tokens, T_e the tokens routed to expert e.
"""

from __future__ import annotations

import math
from typing import Callable

import torch
from torch import Tensor, nn

from .recording import Recorder, record


def even_share(tokens: int, top_k: int, n_experts: int) -> int:
    """Rows each expert gets when the router spreads tokens · top_k choices evenly, rounded up."""
    return math.ceil(tokens * top_k / n_experts)


class Experts(nn.Module):
    """Router, n_experts routed FFNs and the shared FFN; a drop-in for FeedForward: (N, M, E) -> (N, M, E).

    ``make_ffn(E, width)`` builds one FFN (core.model.FeedForward with the config's activation): passed in so
    that this module needs nothing from core/model.py.
    """

    def __init__(self, E: int, n_experts: int, top_k: int, d_ff_expert: int, make_ffn: Callable[[int, int], nn.Module],
                 *, n_shared_experts: int = 0, norm_topk: bool = True, device=None):
        super().__init__()
        self.n_experts, self.top_k, self.norm_topk = n_experts, top_k, norm_topk
        self.router = nn.Linear(E, n_experts, bias=False, device=device)
        self.experts = nn.ModuleList(make_ffn(E, d_ff_expert) for _ in range(n_experts))
        self.shared = make_ffn(E, n_shared_experts * d_ff_expert) if n_shared_experts else None

    def route(self, x: Tensor, rec: Recorder | None = None, prefix: str = "") -> tuple[Tensor, Tensor]:
        """Each token's top_k experts (N, M, top_k) and their weights (N, M, top_k)."""
        logits = record(rec, prefix + "router_logits", self.router(x))  # (N, M, E) -> (N, M, n_experts)
        probs = torch.softmax(logits, dim=-1)  # (N, M, n_experts): each token's scores sum to 1
        weights, chosen = probs.topk(self.top_k, dim=-1)  # (N, M, top_k) each, best first
        if self.norm_topk:  # Mixtral and Qwen3: the chosen weights sum to 1 again; DeepSeek-V2 keeps them
            weights = weights / weights.sum(dim=-1, keepdim=True)  # (N, M, top_k)
        record(rec, prefix + "top_k_experts", chosen)
        return chosen, record(rec, prefix + "top_k_weights", weights)

    def forward(self, x: Tensor, rec: Recorder | None = None, prefix: str = "") -> Tensor:
        N, M, E = x.shape
        chosen, weights = self.route(x, rec, prefix)  # (N, M, top_k) each
        tokens = x.reshape(N * M, E)  # (T, E): routing forgets which sequence a token came from
        chosen, weights = chosen.reshape(N * M, self.top_k), weights.reshape(N * M, self.top_k)  # (T, top_k)
        counts = torch.zeros(self.n_experts, dtype=torch.long, device=x.device)  # (n_experts,)
        counts.index_add_(0, chosen.flatten(), torch.ones_like(chosen.flatten()))  # tokens per expert
        record(rec, prefix + "tokens_per_expert", counts)
        routed = torch.zeros_like(tokens)  # (T, E)
        for e, expert in enumerate(self.experts):
            token, slot = self.tokens_of(chosen, e)  # (T_e,) each: which tokens chose e, and as which choice
            x_e = tokens[token]  # (T, E) -> (T_e, E): the data decides T_e
            if e == 0:
                record(rec, prefix + "expert0.in", x_e)
            y_e = expert(x_e, rec if e == 0 else None, prefix + f"expert{e}.")  # (T_e, E)
            routed.index_add_(0, token, y_e * weights[token, slot, None])  # (T_e, E) weighted, summed per token
        out = routed.view(N, M, E)  # (T, E) -> (N, M, E)
        if self.shared is not None:  # every token, unweighted
            out = out + self.shared(x, rec, prefix + "shared.")  # (N, M, E)
        return record(rec, prefix + "out", out)

    def tokens_of(self, chosen: Tensor, e: int) -> tuple[Tensor, Tensor]:
        """The rows of ``chosen`` (T, top_k) that picked expert e, and in which slot: (T_e,) each.

        On the meta device there are no values: the even share of rows stands in for T_e.
        """
        if chosen.is_meta:
            share = even_share(chosen.shape[0], self.top_k, self.n_experts)
            empty = torch.empty(share, dtype=torch.long, device="meta")  # (T_e,)
            return empty, empty
        return torch.where(chosen == e)  # (T_e,), (T_e,)
