"""A mixture of experts: the FFN of Mixtral, Qwen3-MoE and DeepSeek, beside the dense FeedForward.

A router scores every token against ``n_experts`` experts, each an FFN of width ``d_ff_expert``; each token
goes through its ``top_k`` best and gets their outputs, weighted by the router. So a token touches
top_k / n_experts of the expert weights: Mixtral holds 8 experts and runs 2 of them. Shared experts, when
there are any, read every token (DeepSeek's); their n_shared_experts FFNs of width d_ff_expert are one FFN
of width n_shared_experts · d_ff_expert, as Hugging Face builds them, which computes the same sum.

A layer's routed experts keep their weights stacked, as Hugging Face keeps them: expert e's matrices are
W_gate[e], W_up[e] (SwiGLU only) and W_down[e], slice e of (n_experts, ...) tensors, one parameter each for
the layer. Each expert computes FeedForward's sum with its slices, on the tokens routed to it.

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
import torch.nn.functional as F
from torch import Tensor, nn

from .recording import Recorder, record


def even_share(tokens: int, top_k: int, n_experts: int) -> int:
    """Rows each expert gets when the router spreads tokens · top_k choices evenly, rounded up."""
    return math.ceil(tokens * top_k / n_experts)


def linear(x: Tensor, W: Tensor, b: Tensor | None, e: int) -> Tensor:
    """Expert e's nn.Linear: x W[e]^T + b[e], with no bias when the layer has none."""
    return F.linear(x, W[e], None if b is None else b[e])  # (T_e, in_features) -> (T_e, out_features)


class StackedExperts(nn.Module):
    """The n_experts routed FFNs of one layer, each of width d_ff_expert, their weights stacked along a first axis.

    Slice e of each is laid out as nn.Linear's weight (out_features, in_features), so expert e runs FeedForward's
    computation with it: W_gate is the first matrix (linear1: SwiGLU's gate, or the one ReLU and GELU read),
    W_up SwiGLU's second (linear3), W_down brings the hidden layer back to E (linear2).
    """

    def __init__(self, E: int, n_experts: int, d_ff_expert: int, *, activation: str = "relu", bias: bool = True,
                 device=None):
        super().__init__()
        self.activation = activation
        swiglu = activation == "swiglu"

        def stacked(*shape: int) -> nn.Parameter:
            return nn.Parameter(torch.empty(n_experts, *shape, device=device))

        self.W_gate = stacked(d_ff_expert, E)  # (n_experts, d_ff_expert, E)
        self.W_up = stacked(d_ff_expert, E) if swiglu else None  # (n_experts, d_ff_expert, E)
        self.W_down = stacked(E, d_ff_expert)  # (n_experts, E, d_ff_expert)
        self.b_gate = stacked(d_ff_expert) if bias else None  # (n_experts, d_ff_expert)
        self.b_up = stacked(d_ff_expert) if bias and swiglu else None  # (n_experts, d_ff_expert)
        self.b_down = stacked(E) if bias else None  # (n_experts, E)
        self.reset_parameters()

    def in_features(self, name: str) -> int:
        """The in_features of the nn.Linear a stacked weight or bias stands for: d_ff_expert for down, else E."""
        return self.W_down.shape[-1] if name.endswith("down") else self.W_gate.shape[-1]

    def reset_parameters(self) -> None:
        """nn.Linear's own initialisation for every expert: uniform within ±1/sqrt(in_features)."""
        for name, p in self.named_parameters():
            bound = 1.0 / math.sqrt(self.in_features(name))
            nn.init.uniform_(p, -bound, bound)

    def activate(self, e: int, x: Tensor, rec: Recorder | None = None, prefix: str = "") -> Tensor:
        """Expert e's d_ff_expert-wide middle, as FeedForward.activate computes it, with slice e of each weight."""
        if self.W_up is None:
            act = F.gelu if self.activation == "gelu" else torch.relu
            return act(linear(x, self.W_gate, self.b_gate, e))  # (T_e, E) -> (T_e, d_ff_expert)
        gate = record(rec, prefix + "gate", linear(x, self.W_gate, self.b_gate, e))  # (T_e, E) -> (T_e, d_ff_expert)
        up = record(rec, prefix + "up", linear(x, self.W_up, self.b_up, e))  # (T_e, E) -> (T_e, d_ff_expert)
        return F.silu(gate) * up  # (T_e, d_ff_expert)

    def forward(self, e: int, x: Tensor, rec: Recorder | None = None, prefix: str = "") -> Tensor:
        """Expert e on the tokens routed to it: (T_e, E) -> (T_e, E)."""
        hidden = self.activate(e, x, rec, prefix)  # (T_e, E) -> (T_e, d_ff_expert)
        record(rec, prefix + "hidden", hidden)
        out = linear(hidden, self.W_down, self.b_down, e)  # (T_e, d_ff_expert) -> (T_e, E)
        return record(rec, prefix + "out", out)


class Experts(nn.Module):
    """Router, n_experts routed FFNs and the shared FFN; a drop-in for FeedForward: (N, M, E) -> (N, M, E).

    The routed experts are ``activation`` FFNs, with biases when ``bias``. ``make_ffn(E, width)`` builds the
    shared FFN (core.model.FeedForward with the config's activation): passed in so that this module needs
    nothing from core/model.py.
    """

    def __init__(self, E: int, n_experts: int, top_k: int, d_ff_expert: int, make_ffn: Callable[[int, int], nn.Module],
                 *, activation: str = "relu", bias: bool = True, n_shared_experts: int = 0, norm_topk: bool = True,
                 device=None):
        super().__init__()
        self.n_experts, self.top_k, self.norm_topk = n_experts, top_k, norm_topk
        self.router = nn.Linear(E, n_experts, bias=False, device=device)
        self.experts = StackedExperts(E, n_experts, d_ff_expert, activation=activation, bias=bias, device=device)
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
        # On the meta device every expert gets the same even share (tokens_of), so expert 0 stands for them all:
        # the shape-only pass runs it alone, and the combined output keeps its shape.
        for e in range(1 if x.is_meta else self.n_experts):
            token, slot = self.tokens_of(chosen, e)  # (T_e,) each: which tokens chose e, and as which choice
            x_e = tokens[token]  # (T, E) -> (T_e, E): the data decides T_e
            if e == 0:
                record(rec, prefix + "expert0.in", x_e)
            y_e = self.experts(e, x_e, rec if e == 0 else None, prefix + f"expert{e}.")  # (T_e, E)
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
