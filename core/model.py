"""The encoder-decoder Transformer of "Attention Is All You Need", written from scratch.

One class per box of the paper's figure. Only nn.Linear, nn.Embedding and nn.LayerNorm are
borrowed from PyTorch; attention, masking, the residual paths and the stacks are spelled out so a
learner can read every step.

Legend, used in the shape comments at the end of every line that changes a shape:
    N batch            M source length      M_target target length    L, S any query / key length
    E embedding size   nhead heads          d_k = E // nhead           d_ff FFN hidden width
    vocab_size tokens

Conventions: batch-first everywhere; a boolean mask's True means *blocked* (PyTorch's
convention); a float mask is added to the scores. Post-norm residual blocks, as in the paper.

Recording: every forward takes ``rec``, a dict-like recorder owned by the caller (or None). The
model writes named, detached tensors into it and keeps nothing itself, so one model object can
serve many callers at once. Nothing here branches on tensor values, so the same code runs on
PyTorch's meta device to get shapes without allocating memory.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import MutableMapping

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F
from torch.nn.modules import module as nn_module

from . import onednn
from .config import TransformerConfig

Recorder = MutableMapping[str, Tensor]


def linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """x @ weight.T + bias, as F.linear; a large product without gradients goes to oneDNN's kernel instead.

    Why: it took 0.58-0.87 of F.linear's time for the benchmark's large products (core/onednn.py has
    the figures, and says when it is off). It has no backward pass, so whatever needs gradients
    (training) takes F.linear; so do small products, where its fixed cost per call loses, and the
    meta device. The two kernels round differently: values agree to float32 rounding, not bit for
    bit. The choice depends on shapes and modes only, never on values.
    """
    # rows x in_features x out_features first: the cheapest test, and it turns most small products away
    if (onednn.LINEAR and x.numel() * weight.shape[0] >= onednn.MIN_MACS and x.dtype == torch.float32
            and x.device.type == "cpu" and not torch.is_grad_enabled()):
        return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")  # (..., in) -> (..., out)
    return F.linear(x, weight, bias)  # (..., in) -> (..., out)


class Box(nn.Module):
    """nn.Module with a quicker attribute set: the base of every module in this file.

    Why: a trace builds its model afresh, and nn.Module.__setattr__ runs a dozen checks on every
    attribute an __init__ sets, plain numbers included. Here a parameter or a submodule set under a
    new name goes straight into nn.Module's own registry, and a plain value onto the object: building
    the benchmark's models (6+6 layers) took 0.76-0.80 of the time, 2.0 ms against 2.5 ms (``python
    bench/ab_core.py <rev> --part build``). Anything else (a tensor, a name nn.Module already tracks,
    a global registration hook) takes nn.Module's own path, so what the module holds is the same
    either way; a test compares the two.
    """

    def __setattr__(self, name: str, value) -> None:
        attrs = self.__dict__
        params, modules, buffers = attrs.get("_parameters"), attrs.get("_modules"), attrs.get("_buffers")
        new_name = params is not None and not (name in attrs or name in params or name in modules or name in buffers)
        if not new_name or (isinstance(value, Tensor) and not isinstance(value, nn.Parameter)) or _registration_hooks():
            nn.Module.__setattr__(self, name, value)
        elif isinstance(value, nn.Parameter):
            params[name] = value  # what nn.Module.register_parameter ends with
        elif isinstance(value, nn.Module):
            modules[name] = value  # what nn.Module.__setattr__ ends with for a submodule
        else:
            object.__setattr__(self, name, value)  # a plain value: what nn.Module.__setattr__ ends with


# nn.Module's global registration hooks, dicts that registering and removing a hook change in place;
# private names, so a PyTorch without them reads as having none.
_HOOKS = tuple(getattr(nn_module, f"_global_{kind}_registration_hooks", {})
               for kind in ("parameter", "module", "buffer"))


def _registration_hooks() -> bool:
    """Whether a global hook on new parameters, modules or buffers is registered (nn.Module's own path runs them)."""
    return any(_HOOKS)


class Linear(Box, nn.Linear):
    """nn.Linear whose weights are drawn once, by ``init_weights``, not at construction, and whose
    product goes through ``linear`` (oneDNN for large products without gradients)."""

    def reset_parameters(self) -> None:
        pass

    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)  # (..., in_features) -> (..., out_features)


class Embedding(Box, nn.Embedding):
    """nn.Embedding initialised by ``init_weights`` (construction allocates, draws nothing)."""

    def reset_parameters(self) -> None:
        pass


class LayerNorm(Box, nn.LayerNorm):
    """nn.LayerNorm initialised by ``init_weights`` to gain 1, bias 0."""

    def reset_parameters(self) -> None:
        pass


def record(rec: Recorder | None, name: str, tensor: Tensor) -> Tensor:
    """The single point every recorded tensor passes through; returns the tensor unchanged.

    A tensor that is part of a gradient graph is kept detached, so holding it does not hold the
    graph; one made without gradients (every trace) is kept as it is.
    """
    if rec is not None:
        rec[name] = tensor.detach() if tensor.requires_grad else tensor
    return tensor


def attention_bias(attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                   dtype: torch.dtype = torch.float32) -> Tensor | None:
    """Both masks as one additive float bias: -inf where blocked (bool True), a float mask as is.

    attn_mask (L, S) and key_padding_mask (N, S) combine by broadcasting to (N, 1, L, S), which is
    nhead times smaller than the scores it is added to. None when there is nothing to add. A float
    attn_mask alone comes back unchanged, so a bias made once (encode, decode) can be handed to
    every layer as its attn_mask at no further cost.
    """
    bias = None
    padding = None if key_padding_mask is None else key_padding_mask[:, None, None, :]  # (N, S) -> (N, 1, 1, S)
    for mask in (attn_mask, padding):
        if mask is None:
            continue
        if mask.dtype == torch.bool:
            mask = torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(mask, float("-inf"))
        bias = mask if bias is None else bias + mask  # (L, S) + (N, 1, 1, S) -> (N, 1, L, S)
    return bias


def generate_square_subsequent_mask(sz: int, device: torch.device | str | None = None) -> Tensor:
    """Causal mask (sz, sz): True above the diagonal, so position i cannot see positions > i.

    The diagonal stays visible: a position may attend to itself. PyTorch's method of this name
    (nn.Transformer.generate_square_subsequent_mask) returns the float form instead, -inf above
    the diagonal and 0 elsewhere; both block the same pairs.
    """
    return torch.ones(sz, sz, dtype=torch.bool, device=device).triu(diagonal=1)  # (sz, sz)


def generate_key_padding_mask(tokens: Tensor, pad_id: int = 0) -> Tensor:
    """Key padding mask (N, L): True where the token is padding, so no query attends to it."""
    return tokens == pad_id  # (N, L)


def sinusoidal_table(L: int, E: int, device: torch.device | str | None = None,
                     dtype: torch.dtype = torch.float32) -> Tensor:
    """The paper's fixed encoding: PE[pos, 2i] = sin(pos / 10000^(2i/E)), PE[pos, 2i+1] = cos(...).

    Computed for exactly L positions, so the sinusoidal kind has no maximum length.
    """
    position = torch.arange(L, device=device, dtype=dtype).unsqueeze(1)  # (L, 1)
    rate = torch.exp(torch.arange(0, E, 2, device=device, dtype=dtype) * (-math.log(10000.0) / E))  # (ceil(E/2),)
    angles = position * rate  # (L, ceil(E/2))
    table = torch.empty(L, E, device=device, dtype=dtype)  # (L, E)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles[:, : E // 2])  # odd E has one cosine column fewer
    return table


class TokenEmbedding(Box):
    """Token ids to vectors, scaled by sqrt(E) as in the paper (section 3.4)."""

    def __init__(self, vocab_size: int, E: int, device=None):
        super().__init__()
        self.E = E
        self.lookup = Embedding(vocab_size, E, device=device)

    def forward(self, tokens: Tensor) -> Tensor:
        return self.lookup(tokens) * math.sqrt(self.E)  # (N, L) -> (N, L, E)


class PositionalEncoding(Box):
    """Position vectors added to the token embeddings: fixed sinusoids, or a learned table."""

    def __init__(self, E: int, kind: str = "sinusoidal", max_len: int = 512, device=None):
        super().__init__()
        if kind not in ("sinusoidal", "learned"):
            raise ValueError(f"positional kind {kind!r} must be 'sinusoidal' or 'learned'")
        self.E, self.kind, self.max_len = E, kind, max_len
        self.table = Embedding(max_len, E, device=device) if kind == "learned" else None

    def forward(self, L: int, device=None, dtype: torch.dtype = torch.float32) -> Tensor:
        if self.table is None:
            return sinusoidal_table(L, self.E, device=device, dtype=dtype)  # (L, E)
        if L > self.max_len:
            raise ValueError(
                f"sequence length {L} is longer than the learned positional table (max_len="
                f"{self.max_len}): a learned table has no row for position {self.max_len}; "
                f"use a shorter sequence, a larger max_len, or sinusoidal encoding"
            )
        return self.table.weight[:L]  # (max_len, E) -> (L, E)


class MultiHeadAttention(Box):
    """nhead scaled dot-product attentions side by side, each on a d_k-wide slice of E.

    W^Q, W^K and W^V are stored stacked, as the rows of one (3E, E) layer ``in_proj``, the way
    PyTorch's nn.MultiheadAttention stores its in_proj_weight; head h's own W^Q, W^K and W^V (each
    E x d_k) are blocks of it, see ``head_weights``. Why stacked: self-attention then gets q, k and v
    from one (E, 3E) product instead of three (E, E) ones, which keeps the cores busier (the README's
    Performance section has the figures); cross-attention gets k and v from one (E, 2E) product.
    The output projection W^O is its own E x E layer, ``out_proj``.
    """

    def __init__(self, E: int, nhead: int, device=None):
        super().__init__()
        if E % nhead:
            raise ValueError(f"nhead={nhead} must divide E={E}")
        self.E, self.nhead, self.d_k = E, nhead, E // nhead
        self.in_proj = Linear(E, 3 * E, device=device)  # rows: W^Q's E, then W^K's E, then W^V's E
        self.out_proj = Linear(E, E, device=device)

    def head_weights(self, head: int) -> dict[str, Tensor]:
        """Head ``head``'s W^Q, W^K, W^V as (E, d_k) matrices, so that q_h = x @ W^Q_h + b."""
        return {name: W[head] for name, W in self.all_head_weights().items()}  # (nhead, E, d_k) -> (E, d_k)

    def all_head_weights(self) -> dict[str, Tensor]:
        """W^Q, W^K, W^V of every head at once, each (nhead, E, d_k): views of ``in_proj``'s weight, no copies."""
        W = self.in_proj.weight.view(3, self.nhead, self.d_k, self.E)  # (3E, E) -> (3, nhead, d_k, E)
        W = W.transpose(-1, -2)  # (3, nhead, E, d_k)
        return {"W_Q": W[0], "W_K": W[1], "W_V": W[2]}  # 3 x (nhead, E, d_k)

    def forward(self, x: Tensor, context: Tensor, attn_mask: Tensor | None = None,
                key_padding_mask: Tensor | None = None, rec: Recorder | None = None,
                prefix: str = "") -> Tensor:
        """Queries from ``x`` (N, L, E); keys and values from ``context`` (N, S, E).

        Self-attention passes the same tensor twice; cross-attention passes the encoder memory.
        ``attn_mask`` is (L, S), or a float bias that broadcasts to (N, nhead, L, S), such as the one
        ``attention_bias`` makes; ``key_padding_mask`` is (N, S).
        """
        N, L, E = x.shape
        S = context.shape[1]
        if context is x:  # self-attention: one product makes q, k and v side by side
            q, k, v = self.in_proj(x).split(E, dim=-1)  # (N, L, 3E) -> 3 x (N, L, E)
        else:  # cross-attention: q from x with W^Q; k and v from context with W^K and W^V
            W, b = self.in_proj.weight, self.in_proj.bias  # (3E, E), (3E,)
            q = linear(x, W[:E], b[:E])  # (N, L, E)
            k, v = linear(context, W[E:], b[E:]).split(E, dim=-1)  # (N, S, 2E) -> 2 x (N, S, E)
        q = q.view(N, L, self.nhead, self.d_k).transpose(1, 2)  # (N, L, E) -> (N, nhead, L, d_k)
        k = k.view(N, S, self.nhead, self.d_k).transpose(1, 2)  # (N, S, E) -> (N, nhead, S, d_k)
        v = v.view(N, S, self.nhead, self.d_k).transpose(1, 2)  # (N, S, E) -> (N, nhead, S, d_k)
        record(rec, prefix + "q", q)
        record(rec, prefix + "k", k)
        record(rec, prefix + "v", v)
        # One batched product (bmm) serves all N * nhead (batch, head) pairs at once; it needs each
        # pair's rows side by side in memory, so reshape copies q, k and v (views of the
        # projections) into that layout. Divide by sqrt(d_k): q.k sums d_k products, so its spread
        # grows like sqrt(d_k). Scaling q before the product gives the same scores and touches d_k
        # numbers per query, not S.
        q_pairs = (q / math.sqrt(self.d_k)).reshape(N * self.nhead, L, self.d_k)  # (N * nhead, L, d_k)
        k_pairs = k.reshape(N * self.nhead, S, self.d_k)  # (N * nhead, S, d_k)
        v_pairs = v.reshape(N * self.nhead, S, self.d_k)  # (N * nhead, S, d_k)
        scores = torch.bmm(q_pairs, k_pairs.transpose(1, 2)).view(N, self.nhead, L, S)  # (N, nhead, L, S)
        bias = attention_bias(attn_mask, key_padding_mask, scores.dtype)  # broadcasts to (N, nhead, L, S), or None
        if bias is not None:
            scores += bias  # blocked pairs become -inf; the bias broadcasts over nhead
        record(rec, prefix + "scores", scores)
        weights = torch.softmax(scores, dim=-1)  # (N, nhead, L, S); each query's row sums to 1
        record(rec, prefix + "weights", weights)
        heads = torch.bmm(weights.view(N * self.nhead, L, S), v_pairs)  # (N * nhead, L, d_k)
        heads = heads.view(N, self.nhead, L, self.d_k)  # (N, nhead, L, d_k)
        record(rec, prefix + "heads", heads)
        concat = heads.transpose(1, 2).reshape(N, L, self.E)  # (N, L, nhead * d_k) = (N, L, E)
        record(rec, prefix + "concat", concat)
        out = self.out_proj(concat)  # (N, L, E)
        return record(rec, prefix + "out", out)


class FeedForward(Box):
    """Position-wise FFN: Linear(E, d_ff), ReLU, Linear(d_ff, E), the same for every position.

    The ReLU sits between the two layers; nothing nonlinear is applied to the FFN's output.
    """

    def __init__(self, E: int, d_ff: int, device=None):
        super().__init__()
        self.linear1 = Linear(E, d_ff, device=device)
        self.linear2 = Linear(d_ff, E, device=device)

    def forward(self, x: Tensor, rec: Recorder | None = None, prefix: str = "") -> Tensor:
        hidden = torch.relu(self.linear1(x))  # (N, L, E) -> (N, L, d_ff)
        record(rec, prefix + "hidden", hidden)
        out = self.linear2(hidden)  # (N, L, d_ff) -> (N, L, E)
        return record(rec, prefix + "out", out)


class EncoderLayer(Box):
    """Self-attention then FFN, each wrapped as LayerNorm(x + sublayer(x)) (post-norm).

    ``residual=False`` drops the skip paths (x = LayerNorm(sublayer(x))); only experiments use it,
    to show what the skip connections are for. With ``attn_mask`` causal, this block is a
    GPT-style decoder-only block, post-norm as in GPT-1 (which used GELU where this block, like the
    paper, uses ReLU; GPT-2 and later also put LayerNorm before each sub-layer).
    """

    def __init__(self, E: int, nhead: int, d_ff: int, residual: bool = True, device=None):
        super().__init__()
        self.residual = residual
        self.self_attn = MultiHeadAttention(E, nhead, device=device)
        self.ffn = FeedForward(E, d_ff, device=device)
        self.norm1 = LayerNorm(E, device=device)
        self.norm2 = LayerNorm(E, device=device)

    def forward(self, x: Tensor, attn_mask: Tensor | None = None, key_padding_mask: Tensor | None = None,
                rec: Recorder | None = None, prefix: str = "") -> Tensor:
        a = self.self_attn(x, x, attn_mask, key_padding_mask, rec, prefix + "self_attn.")  # (N, M, E)
        x = self.norm1(x + a if self.residual else a)  # (N, M, E)
        record(rec, prefix + "ffn_in", x)
        f = self.ffn(x, rec, prefix + "ffn.")  # (N, M, E)
        x = self.norm2(x + f if self.residual else f)  # (N, M, E)
        return record(rec, prefix + "out", x)


class DecoderLayer(Box):
    """Masked self-attention, then cross-attention over the encoder memory, then the FFN."""

    def __init__(self, E: int, nhead: int, d_ff: int, residual: bool = True, device=None):
        super().__init__()
        self.residual = residual
        self.self_attn = MultiHeadAttention(E, nhead, device=device)
        self.cross_attn = MultiHeadAttention(E, nhead, device=device)
        self.ffn = FeedForward(E, d_ff, device=device)
        self.norm1 = LayerNorm(E, device=device)
        self.norm2 = LayerNorm(E, device=device)
        self.norm3 = LayerNorm(E, device=device)

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, rec: Recorder | None = None,
                prefix: str = "") -> Tensor:
        a = self.self_attn(x, x, tgt_mask, tgt_key_padding_mask, rec, prefix + "self_attn.")  # (N, M_target, E)
        x = self.norm1(x + a if self.residual else a)  # (N, M_target, E)
        c = self.cross_attn(x, memory, memory_mask, memory_key_padding_mask, rec,
                            prefix + "cross_attn.")  # (N, M_target, E)
        x = self.norm2(x + c if self.residual else c)  # (N, M_target, E)
        record(rec, prefix + "ffn_in", x)
        f = self.ffn(x, rec, prefix + "ffn.")  # (N, M_target, E)
        x = self.norm3(x + f if self.residual else f)  # (N, M_target, E)
        return record(rec, prefix + "out", x)


class Transformer(Box):
    """The encoder-decoder of the paper, with embeddings, positions and the output layer.

    Shape:
        src (N, M) and tgt (N, M_target) token ids -> logits (N, M_target, vocab_size).
        src_mask (M, M), tgt_mask (M_target, M_target), memory_mask (M_target, M);
        *_key_padding_mask (N, M) or (N, M_target). Boolean True means blocked.
    """

    def __init__(self, *, vocab_size: int, E: int = 512, nhead: int = 8, layers: int = 6,
                 d_ff: int | None = None, positional: str = "sinusoidal", max_len: int = 512,
                 tie_embeddings: bool = False, residual: bool = True, device=None):
        super().__init__()
        d_ff = 4 * E if d_ff is None else d_ff
        self.E, self.nhead, self.vocab_size = E, nhead, vocab_size
        self.src_embed = TokenEmbedding(vocab_size, E, device=device)
        # Tied: one matrix serves both embeddings and the pre-softmax layer (paper, section 3.4).
        self.tgt_embed = self.src_embed if tie_embeddings else TokenEmbedding(vocab_size, E, device=device)
        self.positional = PositionalEncoding(E, positional, max_len, device=device)
        self.encoder = nn.ModuleList(EncoderLayer(E, nhead, d_ff, residual, device) for _ in range(layers))
        self.decoder = nn.ModuleList(DecoderLayer(E, nhead, d_ff, residual, device) for _ in range(layers))
        self.generator = Linear(E, vocab_size, device=device)
        if tie_embeddings:
            self.generator.weight = self.tgt_embed.lookup.weight

    @classmethod
    def from_config(cls, cfg: TransformerConfig, device=None, residual: bool = True,
                    draw_weights: bool = True) -> "Transformer":
        """Build the model a config describes, with seeded weights (none on the meta device).

        ``draw_weights=False`` leaves the weights as allocated, for benchmarks that time the
        drawing on its own.
        """
        model = cls(vocab_size=cfg.vocab_size, E=cfg.E, nhead=cfg.nhead, layers=cfg.layers, d_ff=cfg.d_ff,
                    positional=cfg.positional, max_len=cfg.max_len, tie_embeddings=cfg.tie_embeddings,
                    residual=residual, device=device)
        return init_weights(model, cfg.seed) if draw_weights and str(device) != "meta" else model

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)
    generate_key_padding_mask = staticmethod(generate_key_padding_mask)
    generate_source_key_padding_mask = staticmethod(generate_key_padding_mask)

    def embed(self, tokens: Tensor, which: str, rec: Recorder | None = None) -> Tensor:
        """Token embedding plus positional encoding, for ``which`` = 'src' or 'tgt'."""
        table = self.src_embed if which == "src" else self.tgt_embed
        record(rec, which + ".tokens", tokens)
        emb = record(rec, which + ".embed", table(tokens))  # (N, L) -> (N, L, E)
        pos = record(rec, which + ".pos", self.positional(tokens.shape[1], emb.device, emb.dtype))  # (L, E)
        return record(rec, which + ".sum", emb + pos)  # (N, L, E) + (L, E) broadcasts to (N, L, E)

    def encode(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
               rec: Recorder | None = None) -> Tensor:
        """Source ids (N, M) -> memory (N, M, E), the encoder output the decoder attends to."""
        x = self.embed(src, "src", rec)  # (N, M, E)
        # Every layer blocks the same pairs, so both masks become one additive bias, made once.
        bias = attention_bias(src_mask, src_key_padding_mask, x.dtype)  # (N, 1, M, M) or smaller, or None
        for i, layer in enumerate(self.encoder):
            x = layer(x, bias, None, rec, f"enc.{i}.")  # (N, M, E)
        return record(rec, "memory", x)

    def decode(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
               memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
               memory_key_padding_mask: Tensor | None = None, rec: Recorder | None = None) -> Tensor:
        """Target ids (N, M_target) and memory (N, M, E) -> decoder output (N, M_target, E)."""
        x = self.embed(tgt, "tgt", rec)  # (N, M_target, E)
        # As in encode: each kind of attention blocks the same pairs in every layer.
        self_bias = attention_bias(tgt_mask, tgt_key_padding_mask, x.dtype)  # (N, 1, M_target, M_target) or smaller
        cross_bias = attention_bias(memory_mask, memory_key_padding_mask, x.dtype)  # (N, 1, M_target, M) or smaller
        for i, layer in enumerate(self.decoder):
            x = layer(x, memory, self_bias, cross_bias, None, None, rec, f"dec.{i}.")  # (N, M_target, E)
        return record(rec, "dec.out", x)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                rec: Recorder | None = None) -> Tensor:
        """Logits (N, M_target, vocab_size); the probabilities are recorded as 'probs'."""
        memory = self.encode(src, src_mask, src_key_padding_mask, rec)  # (N, M, E)
        out = self.decode(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                          memory_key_padding_mask, rec)  # (N, M_target, E)
        logits = record(rec, "logits", self.generator(out))  # (N, M_target, E) -> (N, M_target, vocab_size)
        if rec is not None:
            record(rec, "probs", torch.softmax(logits, dim=-1))  # (N, M_target, vocab_size)
        return logits


class CausalLM(Box):
    """Decoder-only language model from the same blocks: EncoderLayer under a causal mask.

    ``causal=False`` in forward removes the mask, which lets every position see the future: the
    training lab uses that to show a model cheating.
    """

    def __init__(self, *, vocab_size: int, E: int = 64, nhead: int = 4, layers: int = 2,
                 d_ff: int | None = None, max_len: int = 64, positional: str = "learned", device=None):
        super().__init__()
        d_ff = 4 * E if d_ff is None else d_ff
        self.embed = TokenEmbedding(vocab_size, E, device=device)
        self.positional = PositionalEncoding(E, positional, max_len, device=device)
        self.blocks = nn.ModuleList(EncoderLayer(E, nhead, d_ff, device=device) for _ in range(layers))
        self.generator = Linear(E, vocab_size, device=device)

    def forward(self, tokens: Tensor, causal: bool = True, rec: Recorder | None = None) -> Tensor:
        """Token ids (N, L) -> next-token logits (N, L, vocab_size)."""
        L = tokens.shape[1]
        x = self.embed(tokens)  # (N, L, E)
        x = x + self.positional(L, x.device, x.dtype)  # (N, L, E) + (L, E) -> (N, L, E)
        mask = generate_square_subsequent_mask(L, x.device) if causal else None  # (L, L)
        bias = attention_bias(mask, None, x.dtype)  # (L, L): -inf above the diagonal, or None
        for i, block in enumerate(self.blocks):
            x = block(x, bias, None, rec, f"block.{i}.")  # (N, L, E)
        return self.generator(x)  # (N, L, E) -> (N, L, vocab_size)


CHUNK_NUMEL = 1 << 19  # one random stream per this many weights; a thread draws a whole chunk
# Created now, but its threads start only when a model of more than one chunk is first drawn; one
# shared pool means concurrent sessions never race to create their own.
_INIT_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="init_weights")


def _draws(model: nn.Module) -> list[tuple[Tensor, float, bool]]:
    """Every tensor to fill: (tensor, bound, random). Random ones are uniform on [-bound, bound];
    the others (LayerNorm gains and biases) are set to ``bound``."""
    draws: list[tuple[Tensor, float, bool]] = []
    modules = list(model.modules())  # walked twice; the walk itself is most of this function's cost
    tied = {id(m.lookup.weight) for m in modules if isinstance(m, TokenEmbedding)}
    for module in modules:
        if isinstance(module, nn.Linear):
            bound = 1.0 / math.sqrt(module.in_features)  # PyTorch's default bound for nn.Linear
            if id(module.weight) not in tied:  # a tied output layer keeps the embedding's values
                draws.append((module.weight, bound, True))
            if module.bias is not None:
                draws.append((module.bias, bound, True))
        elif isinstance(module, TokenEmbedding):
            # Scaled by sqrt(E) in forward, so a spread of 1/sqrt(E) here gives unit-size embeddings
            # there. Uniform on +-sqrt(3/E) has exactly that standard deviation.
            draws.append((module.lookup.weight, math.sqrt(3.0 / module.E), True))
        elif isinstance(module, PositionalEncoding) and module.table is not None:
            draws.append((module.table.weight, math.sqrt(3.0), True))  # standard deviation 1
        elif isinstance(module, nn.LayerNorm):
            draws += [(module.weight, 1.0, False), (module.bias, 0.0, False)]
    return draws


Piece = tuple[int, np.ndarray, float]  # (start in its chunk, flat float32 target, bound)


def _fill_chunk(seed: int, chunk: int, pieces: list[Piece]) -> None:
    """Fill pieces of one chunk of the weight stream from that chunk's own generator.

    Each weight takes 16 random bits: the generator's raw 64-bit words, read as signed 16-bit
    integers, are uniform on [-2^15, 2^15), and one multiply turns them into 65,536 evenly spaced
    values across [-bound, bound). For random starting weights that is plenty (the spacing is
    bound / 32768), and it takes half the random bits of drawing floats on [0, 1) and stretching
    them, in a fraction of the time (bench/init_weights.py). numpy releases Python's
    lock while it works, so two chunks fill side by side.

    Each piece says where in the chunk it starts, so a part of a model (core.slim) gets the words
    the whole model's drawing gives those positions: a generator's output is one sequence, so the
    first n words are the same however many are drawn.
    """
    words = stream_words(seed, chunk, max((start + out.size for start, out, _ in pieces), default=0))
    for start, out, bound in pieces:
        scale = np.float32(bound / 2**15)
        if out.size < 4096:  # a bias or a small matrix: one call costs less than two
            np.multiply(words[start:start + out.size], scale, out=out, dtype=np.float32, casting="unsafe")
            continue
        # Two passes beat one for large pieces: numpy's multiply of int16 by float32 converts through a
        # small buffer as it goes, while converting first (exact) and then scaling in place runs each
        # pass over the whole piece. Drawing the largest benchmark model took 0.90-0.92 of the time
        # (python bench/ab_core.py <rev> --part init; no gain at the smaller sizes). Same values.
        np.copyto(out, words[start:start + out.size], casting="unsafe")  # int16 -> float32, exact
        np.multiply(out, scale, out=out)


def stream_words(seed: int, chunk: int, n: int) -> np.ndarray:
    """The first ``n`` 16-bit words of chunk ``chunk`` of the weight stream (see init_weights)."""
    return np.random.SFC64([seed, chunk]).random_raw((n + 3) // 4).view(np.int16)[:n]  # n uniform int16


def fill_chunks(seed: int, chunks: dict[int, list[Piece]]) -> None:
    """Fill every chunk's pieces: the calling thread takes every other chunk, one drawing thread the rest.

    Why the caller works too, rather than waiting while two drawing threads share the chunks: each
    chunk handed over and each chunk finished passes Python's lock between threads, and with one
    handover for all of a thread's chunks, drawing the largest benchmark model took 0.89-0.94 of the
    time and the medium one 0.95-0.98 (python bench/ab_core.py <rev> --part init). Two sessions
    drawing at once each take one of the pool's two threads.
    """
    items = list(chunks.items())
    helper = _INIT_POOL.submit(_fill_in_turn, seed, items[1::2]) if len(items) > 1 else None
    try:
        _fill_in_turn(seed, items[0::2])
    finally:
        if helper is not None:
            helper.result()  # wait even if this thread's part failed: the helper is writing into the same model


def _fill_in_turn(seed: int, items: list[tuple[int, list[Piece]]]) -> None:
    for chunk, pieces in items:
        _fill_chunk(seed, chunk, pieces)


@torch.no_grad()
def init_weights(model: nn.Module, seed: int) -> nn.Module:
    """Seeded weights in one cheap pass: uniform draws with the spreads PyTorch's defaults use, except the
    token embeddings' 1/sqrt(E) (see _draws).

    Why not PyTorch's own initialisers: nn.Transformer draws every matrix twice (the layer default,
    then Xavier) with the mt19937 generator; the values are random either way. Here every weight
    is drawn once, 16 random bits from numpy's SFC64 generator (see _fill_chunk), at a fraction of
    mt19937's cost per number (bench/init_weights.py measures both).

    Determinism: the model's random weights, in module order, form one stream cut into chunks of
    CHUNK_NUMEL; chunk c has its own generator seeded with (seed, c). The values therefore depend
    only on the seed and the model's layout, never on how many threads drew them: a model of
    more than one chunk is drawn on two threads (see fill_chunks), a small one inline. Private
    generators also keep concurrent sessions' random streams apart.
    """
    chunks: list[list[Piece]] = [[]]
    room = CHUNK_NUMEL  # what is left of the current chunk
    for tensor, bound, random in _draws(model):
        if not random:
            tensor.fill_(bound)
            continue
        flat = tensor.detach().view(-1).numpy()  # any shape -> (numel,), sharing the tensor's memory
        while flat.size:
            if room == 0:
                chunks.append([])
                room = CHUNK_NUMEL
            piece, flat = flat[:room], flat[room:]  # (room,) or less, and the rest
            chunks[-1].append((CHUNK_NUMEL - room, piece, bound))
            room -= piece.size
    fill_chunks(seed, dict(enumerate(chunks)))
    return model


def build_causal_lm(seed: int = 0, device=None, **sizes) -> CausalLM:
    """A seeded CausalLM, built with the same cheap initialisation as the Transformer."""
    return init_weights(CausalLM(device=device, **sizes), seed)
