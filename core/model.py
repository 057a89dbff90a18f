"""The Transformer of "Attention Is All You Need", written from scratch, and the families it grew into.

One class per box of the paper's figure. Only nn.Linear, nn.Embedding, nn.LayerNorm and nn.RMSNorm
are borrowed from PyTorch; attention, masking, the residual paths and the stacks are spelled out so a
learner can read every step. The later variants are small choices inside the same classes: one stack
(GPT, Llama: decoder-only; BERT: encoder-only), pre-norm, RMSNorm, GELU or SwiGLU, grouped-query
attention (fewer K/V heads), rotary positions (RoPE) and T5's relative position bias (core/relative_bias.py);
a head width of its own (head_dim), an RMSNorm on each head's q and k (qk_norm), a sliding window (its band
mask in core/window.py), and a mixture of experts in place of the FFN (core/experts.py). DeepSeek's multi-head
latent attention lives beside MultiHeadAttention, in core/latent_attention.py.

Legend, used in the shape comments at the end of every line that changes a shape:
    N batch            M source length      M_target target length    L, S any query / key length
    E embedding size   nhead heads          d_k = E // nhead           d_ff FFN hidden width
    vocab_size tokens  nhead_kv K/V heads   d_k = head_dim when given   window: how far back a query sees

Conventions: batch-first everywhere; a boolean mask's True means *blocked* (PyTorch's
convention); a float mask is added to the scores. Post-norm residual blocks, as in the paper, unless
``norm_first``.

Recording: every forward takes ``rec``, a dict-like recorder owned by the caller (or None). The
model writes named tensors into it and keeps nothing itself, so one model object can serve many
callers at once. Nothing here branches on tensor values, so the same code runs on PyTorch's meta
device to get shapes without allocating memory.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from .config import TransformerConfig, windowed
from .experts import Experts
from .latent_attention import LatentAttention
from .positions import apply_rope, rope_angles, sinusoidal_table
from .recording import Recorder, apply_mask, record
from .relative_bias import RelativePositionBias
from .weights import seeded
from .window import sliding_window_mask


def generate_square_subsequent_mask(sz: int, device: torch.device | str | None = None) -> Tensor:
    """Causal mask (sz, sz): True above the diagonal, so position i cannot see positions > i.

    The diagonal stays visible: a position may attend to itself. PyTorch's method of this name
    returns the float form (-inf above the diagonal, 0 elsewhere); both block the same pairs.
    """
    return torch.ones(sz, sz, dtype=torch.bool, device=device).triu(diagonal=1)  # (sz, sz)


def generate_key_padding_mask(tokens: Tensor, pad_id: int = 0) -> Tensor:
    """Key padding mask (N, L): True where the token is padding, so no query attends to it."""
    return tokens == pad_id  # (N, L)


def make_norm(kind: str, E: int, bias: bool = True, device=None) -> nn.Module:
    """LayerNorm (subtract the mean, divide by the spread) or RMSNorm (divide by the root mean square only)."""
    if kind == "rmsnorm":
        return nn.RMSNorm(E, eps=1e-5, device=device)  # a gain, no bias, no mean: Llama's
    return nn.LayerNorm(E, bias=bias, device=device)


class TokenEmbedding(nn.Module):
    """Token ids to vectors, scaled by sqrt(E) as in the paper (section 3.4); GPT, BERT and Llama do not scale."""

    def __init__(self, vocab_size: int, E: int, scale: bool = True, device=None):
        super().__init__()
        self.E, self.scale = E, scale
        self.lookup = nn.Embedding(vocab_size, E, device=device)

    def forward(self, tokens: Tensor) -> Tensor:
        if not self.scale:
            return self.lookup(tokens)  # (N, L) -> (N, L, E)
        return self.lookup(tokens) * math.sqrt(self.E)  # (N, L) -> (N, L, E)


class PositionalEncoding(nn.Module):
    """Where each token sits: fixed sinusoids or a learned table added to the embeddings, or RoPE's
    rotation table (L, d_k), which attention applies to q and k instead; "none" and "relative" (T5's bias on the
    scores, RelativePositionBias) give nothing here."""

    ADDED = ("sinusoidal", "learned")

    def __init__(self, E: int, kind: str = "sinusoidal", max_len: int = 512, d_k: int | None = None, device=None,
                 interleaved: bool = False):
        super().__init__()
        if kind not in (*self.ADDED, "rope", "none", "relative"):
            raise ValueError(f"positional kind {kind!r} must be 'sinusoidal', 'learned', 'rope', 'none' or 'relative'")
        self.E, self.kind, self.max_len, self.d_k = E, kind, max_len, d_k or E
        self.interleaved = interleaved  # RoPE's table laid out for neighbouring pairs (latent attention's)
        # Learned: one trained row per position, read in order (no ids to look up).
        self.table = nn.Parameter(torch.empty(max_len, E, device=device)) if kind == "learned" else None

    def forward(self, L: int, device=None, dtype: torch.dtype = torch.float32, start: int = 0) -> Tensor | None:
        """Positions start .. start + L - 1 (a KV cache's new tokens start after the cached ones)."""
        if self.kind in ("none", "relative"):
            return None
        if self.kind == "rope":
            return rope_angles(L, self.d_k, device, dtype, start, interleaved=self.interleaved)  # (L, d_k)
        if self.table is None:
            return sinusoidal_table(L, self.E, device, dtype, start)  # (L, E)
        L = start + L
        if L > self.max_len:
            raise ValueError(
                f"sequence length {L} is longer than the learned positional table (max_len="
                f"{self.max_len}): a learned table has no row for position {self.max_len}; "
                f"use a shorter sequence, a larger max_len, or sinusoidal encoding"
            )
        return self.table[start:L]  # (max_len, E) -> (L, E)


class MultiHeadAttention(nn.Module):
    """nhead scaled dot-product attentions side by side, each on a d_k-wide slice of E (section 3.2.2).

    W_q, W_k and W_v hold every head's W^Q_h, W^K_h, W^V_h (each E x d_k) side by side, so one
    product gives all heads' queries, keys or values at once; W_o is the output projection W^O.
    With ``nhead_kv`` < nhead (grouped-query attention; 1 is multi-query) W_k and W_v make only
    nhead_kv heads, each shared by nhead / nhead_kv query heads: fewer weights and a smaller KV cache.
    ``head_dim`` sets d_k apart from E // nhead (Qwen3, Gemma): W_q then maps E to nhead · d_k and W_o back.
    ``qk_norm`` normalises each head's q and k (RMSNorm over d_k, before RoPE, as Qwen3). ``window`` > 0
    keeps only the last ``window`` positions in a cache, as a rolling buffer: the band mask hides older ones.
    """

    def __init__(self, E: int, nhead: int, device=None, *, nhead_kv: int | None = None, bias: bool = True,
                 head_dim: int | None = None, qk_norm: bool = False, window: int = 0, scale: bool = True):
        super().__init__()
        nhead_kv = nhead if nhead_kv is None else nhead_kv
        if (head_dim is None and E % nhead) or nhead % nhead_kv:
            raise ValueError(f"nhead={nhead} must divide E={E} (or give head_dim), and nhead_kv={nhead_kv} must "
                             "divide nhead")
        self.E, self.nhead, self.nhead_kv, self.window = E, nhead, nhead_kv, window
        self.scale = scale  # T5 leaves out 1/sqrt(d_k): its initialisation of W_q folds it in
        self.d_k = E // nhead if head_dim is None else head_dim
        self.W_q = nn.Linear(E, nhead * self.d_k, bias=bias, device=device)
        self.W_k = nn.Linear(E, nhead_kv * self.d_k, bias=bias, device=device)
        self.W_v = nn.Linear(E, nhead_kv * self.d_k, bias=bias, device=device)
        self.W_o = nn.Linear(nhead * self.d_k, E, bias=bias, device=device)
        self.q_norm = nn.RMSNorm(self.d_k, eps=1e-5, device=device) if qk_norm else None
        self.k_norm = nn.RMSNorm(self.d_k, eps=1e-5, device=device) if qk_norm else None

    def head_weights(self) -> dict[str, Tensor]:
        """Every head's W^Q (nhead, E, d_k), W^K and W^V (nhead_kv, E, d_k), so that head h's q = x @ W_Q[h] + b:
        views, no copies."""
        def per_head(linear: nn.Linear) -> Tensor:
            return linear.weight.view(-1, self.d_k, self.E).transpose(1, 2)  # (heads * d_k, E) -> (heads, E, d_k)
        return {"W_Q": per_head(self.W_q), "W_K": per_head(self.W_k), "W_V": per_head(self.W_v)}

    def forward(self, x: Tensor, context: Tensor, attn_mask: Tensor | None = None,
                key_padding_mask: Tensor | None = None, rec: Recorder | None = None,
                prefix: str = "", rope: Tensor | None = None, cache: dict[str, Tensor] | None = None,
                position_bias: Tensor | None = None) -> Tensor:
        """Queries from ``x`` (N, L, E); keys and values from ``context`` (N, S, E).

        Self-attention passes the same tensor twice; cross-attention passes the encoder memory.
        ``attn_mask`` is (L, S) and ``key_padding_mask`` (N, S). ``rope`` (L, d_k) turns q and k by
        their positions. ``cache`` holds the keys and values of earlier positions ('k', 'v'); this
        call's join them, so S counts both; a windowed layer's cache keeps only the last ``window`` of them.
        ``position_bias`` (nhead, L, S) is T5's, added to the scores.
        """
        N, L, E = x.shape
        S = context.shape[1]
        q = self.W_q(x).view(N, L, self.nhead, self.d_k)  # (N, L, E) -> (N, L, nhead, d_k)
        k = self.W_k(context).view(N, S, self.nhead_kv, self.d_k)  # (N, S, E) -> (N, S, nhead_kv, d_k)
        if self.q_norm is not None:  # each head's q and k scaled to unit RMS, so no head's scores blow up
            q, k = self.q_norm(q), self.k_norm(k)  # shapes unchanged
        q = q.transpose(1, 2)  # (N, nhead, L, d_k)
        k = k.transpose(1, 2)  # (N, nhead_kv, S, d_k)
        v = self.W_v(context).view(N, S, self.nhead_kv, self.d_k).transpose(1, 2)  # (N, S, E) -> (N, nhead_kv, S, d_k)
        if rope is not None:  # rotary positions: q and k turned, v left alone
            q, k = apply_rope(q, rope), apply_rope(k, rope)  # shapes unchanged
        if cache is not None:  # the new positions' keys and values join the cached ones
            k = torch.cat((cache["k"], k), dim=2) if "k" in cache else k  # (N, nhead_kv, S, d_k)
            v = torch.cat((cache["v"], v), dim=2) if "v" in cache else v  # (N, nhead_kv, S, d_k)
            keep = self.window or k.shape[2]  # a windowed layer's rolling buffer: the next query needs no older key
            cache["k"], cache["v"] = k[:, :, -keep:], v[:, :, -keep:]  # (N, nhead_kv, min(S, window), d_k)
            cache["seen"] = cache.get("seen", 0) + L  # positions so far, which a capped cache no longer shows
        record(rec, prefix + "q", q)
        record(rec, prefix + "k", k)
        record(rec, prefix + "v", v)
        if self.nhead_kv < self.nhead:  # query head h reads K/V head h // group, as HF's repeat_kv lays it out
            group = self.nhead // self.nhead_kv
            k = k.repeat_interleave(group, dim=1)  # (N, nhead_kv, S, d_k) -> (N, nhead, S, d_k)
            v = v.repeat_interleave(group, dim=1)  # (N, nhead_kv, S, d_k) -> (N, nhead, S, d_k)
        scores = q @ k.transpose(-2, -1)  # (N, nhead, L, S)
        if self.scale:
            scores = scores / math.sqrt(self.d_k)  # (N, nhead, L, S)
        if position_bias is not None:
            scores = scores + position_bias  # (nhead, L, S) broadcasts over N
        scores = apply_mask(scores, attn_mask)  # (L, S) broadcasts over N and nhead
        if key_padding_mask is not None:
            scores = apply_mask(scores, key_padding_mask[:, None, None, :])  # (N, S) -> (N, 1, 1, S)
        record(rec, prefix + "scores", scores)
        weights = torch.softmax(scores, dim=-1)  # (N, nhead, L, S): each row sums to 1
        record(rec, prefix + "weights", weights)
        heads = weights @ v  # (N, nhead, L, S) @ (N, nhead, S, d_k) -> (N, nhead, L, d_k)
        record(rec, prefix + "heads", heads)
        concat = heads.transpose(1, 2).reshape(N, L, self.nhead * self.d_k)  # (N, L, nhead, d_k) -> (N, L, nhead·d_k)
        record(rec, prefix + "concat", concat)
        out = self.W_o(concat)  # (N, L, E)
        return record(rec, prefix + "out", out)


def self_attention(E: int, nhead: int, device, latent: dict[str, int] | None, *, bias: bool = True,
                   **heads) -> nn.Module:
    """A layer's self-attention: multi-head (``heads``: nhead_kv, head_dim, qk_norm, window), or latent when
    ``latent`` gives its widths (kv_lora_rank, q_lora_rank, rope_head_dim, nope_head_dim, v_head_dim;
    core.latent_attention)."""
    if latent is not None:
        return LatentAttention(E, nhead, bias=bias, device=device, **latent)
    return MultiHeadAttention(E, nhead, device, bias=bias, **heads)


class FeedForward(nn.Module):
    """Position-wise FFN: Linear(E, d_ff), ReLU, Linear(d_ff, E), the same for every position (section 3.3).

    GELU swaps the ReLU for a smooth curve (the exact erf form, PyTorch's and BERT's). SwiGLU (Llama)
    multiplies two d_ff-wide projections, a SiLU-gated one (linear1, the gate) and a plain one
    (linear3, up), before linear2 (down) brings the product back to E. Every position is on its own, so it
    takes any leading axes: an expert gets its tokens as (T_e, E).
    """

    def __init__(self, E: int, d_ff: int, device=None, *, activation: str = "relu", bias: bool = True):
        super().__init__()
        self.activation = activation
        self.linear1 = nn.Linear(E, d_ff, bias=bias, device=device)
        self.linear2 = nn.Linear(d_ff, E, bias=bias, device=device)
        self.linear3 = nn.Linear(E, d_ff, bias=bias, device=device) if activation == "swiglu" else None

    def activate(self, x: Tensor, rec: Recorder | None = None, prefix: str = "") -> Tensor:
        """The d_ff-wide middle: relu(x W1), gelu(x W1), or SwiGLU's silu(x W1) * (x W3)."""
        if self.linear3 is None:
            act = F.gelu if self.activation == "gelu" else torch.relu
            return act(self.linear1(x))  # (N, L, E) -> (N, L, d_ff)
        gate = record(rec, prefix + "gate", self.linear1(x))  # (N, L, E) -> (N, L, d_ff)
        up = record(rec, prefix + "up", self.linear3(x))  # (N, L, E) -> (N, L, d_ff)
        return F.silu(gate) * up  # (N, L, d_ff)

    def forward(self, x: Tensor, rec: Recorder | None = None, prefix: str = "") -> Tensor:
        hidden = self.activate(x, rec, prefix)  # (N, L, E) -> (N, L, d_ff)
        record(rec, prefix + "hidden", hidden)
        out = self.linear2(hidden)  # (N, L, d_ff) -> (N, L, E)
        return record(rec, prefix + "out", out)


def make_ffn(E: int, d_ff: int, device, activation: str, bias: bool, experts: dict | None) -> nn.Module:
    """A layer's FFN: the dense FeedForward, or, given ``experts`` (n_experts, top_k, d_ff_expert, ...), a mixture."""
    if experts is None:
        return FeedForward(E, d_ff, device, activation=activation, bias=bias)
    return Experts(E, **experts, activation=activation, bias=bias, device=device,
                   make_ffn=lambda E, width: FeedForward(E, width, device, activation=activation, bias=bias))


class EncoderLayer(nn.Module):
    """Self-attention then FFN, each wrapped as LayerNorm(x + sublayer(x)) (post-norm, section 3.1).

    ``norm_first`` (pre-norm: GPT-2, Llama, nn.TransformerEncoderLayer(norm_first=True)) wraps each as
    x + sublayer(norm(x)) instead, leaving the residual path un-normalised, which trains deep stacks
    more steadily. ``residual=False`` drops the skip paths (x = LayerNorm(sublayer(x))); only experiments
    use it, to show what the skip connections are for. Under a causal mask this is a GPT-style block.
    """

    def __init__(self, E: int, nhead: int, d_ff: int, residual: bool = True, device=None, *,
                 nhead_kv: int | None = None, norm: str = "layernorm", norm_first: bool = False,
                 activation: str = "relu", bias: bool = True, head_dim: int | None = None, qk_norm: bool = False,
                 window: int = 0, experts: dict | None = None, latent: dict[str, int] | None = None,
                 scale: bool = True, relative: RelativePositionBias | None = None):
        super().__init__()
        self.residual, self.norm_first = residual, norm_first
        self.relative = relative  # T5: the stack's bias table, in its first layer only
        self.self_attn = self_attention(E, nhead, device, latent, nhead_kv=nhead_kv, bias=bias, head_dim=head_dim,
                                        qk_norm=qk_norm, window=window, scale=scale)
        self.ffn = make_ffn(E, d_ff, device, activation, bias, experts)
        self.norm1 = make_norm(norm, E, bias, device)
        self.norm2 = make_norm(norm, E, bias, device)

    def forward(self, x: Tensor, attn_mask: Tensor | None = None, key_padding_mask: Tensor | None = None,
                rec: Recorder | None = None, prefix: str = "", rope: Tensor | None = None,
                cache: dict[str, Tensor] | None = None, position_bias: Tensor | None = None) -> Tensor:
        h = self.norm1(x) if self.norm_first else x  # (N, M, E)
        a = self.self_attn(h, h, attn_mask, key_padding_mask, rec, prefix + "self_attn.", rope, cache,
                           position_bias)  # (N, M, E)
        x = x + a if self.residual else a  # (N, M, E)
        x = x if self.norm_first else self.norm1(x)
        h = record(rec, prefix + "ffn_in", self.norm2(x) if self.norm_first else x)  # (N, M, E)
        f = self.ffn(h, rec, prefix + "ffn.")  # (N, M, E)
        x = x + f if self.residual else f  # (N, M, E)
        x = x if self.norm_first else self.norm2(x)
        return record(rec, prefix + "out", x)


class DecoderLayer(nn.Module):
    """Masked self-attention, then cross-attention over the encoder memory, then the FFN.

    A decoder-only model's layer (``cross=False``) has no memory to read, so no cross-attention.
    """

    def __init__(self, E: int, nhead: int, d_ff: int, residual: bool = True, device=None, *, cross: bool = True,
                 nhead_kv: int | None = None, norm: str = "layernorm", norm_first: bool = False,
                 activation: str = "relu", bias: bool = True, head_dim: int | None = None, qk_norm: bool = False,
                 window: int = 0, experts: dict | None = None, latent: dict[str, int] | None = None,
                 scale: bool = True, relative: RelativePositionBias | None = None):
        super().__init__()
        self.residual, self.norm_first = residual, norm_first
        self.relative = relative  # T5: the stack's bias table, in its first layer only
        heads = dict(nhead_kv=nhead_kv, bias=bias, head_dim=head_dim, qk_norm=qk_norm, scale=scale)
        self.self_attn = self_attention(E, nhead, device, latent, window=window, **heads)
        self.cross_attn = MultiHeadAttention(E, nhead, device, **heads) if cross else None
        self.ffn = make_ffn(E, d_ff, device, activation, bias, experts)
        self.norm1 = make_norm(norm, E, bias, device)
        self.norm2 = make_norm(norm, E, bias, device) if cross else None
        self.norm3 = make_norm(norm, E, bias, device)

    def forward(self, x: Tensor, memory: Tensor | None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, rec: Recorder | None = None,
                prefix: str = "", rope: Tensor | None = None, cache: dict[str, Tensor] | None = None,
                position_bias: Tensor | None = None) -> Tensor:
        h = self.norm1(x) if self.norm_first else x  # (N, M_target, E)
        a = self.self_attn(h, h, tgt_mask, tgt_key_padding_mask, rec, prefix + "self_attn.", rope,
                           cache, position_bias)  # (N, M_target, E); cross-attention gets no position bias
        x = x + a if self.residual else a  # (N, M_target, E)
        x = x if self.norm_first else self.norm1(x)
        if self.cross_attn is not None:  # a decoder-only model has no memory to read
            h = self.norm2(x) if self.norm_first else x  # (N, M_target, E)
            c = self.cross_attn(h, memory, memory_mask, memory_key_padding_mask, rec,
                                prefix + "cross_attn.")  # (N, M_target, E)
            x = x + c if self.residual else c  # (N, M_target, E)
            x = x if self.norm_first else self.norm2(x)
        h = record(rec, prefix + "ffn_in", self.norm3(x) if self.norm_first else x)  # (N, M_target, E)
        f = self.ffn(h, rec, prefix + "ffn.")  # (N, M_target, E)
        x = x + f if self.residual else f  # (N, M_target, E)
        x = x if self.norm_first else self.norm3(x)
        return record(rec, prefix + "out", x)


def latent_widths(cfg: TransformerConfig) -> dict[str, int] | None:
    """The latent attention's widths a config sets, as LatentAttention takes them; None for multi-head attention."""
    if cfg.attention != "mla":
        return None
    return {name: getattr(cfg, name) for name in ("kv_lora_rank", "q_lora_rank", "rope_head_dim", "nope_head_dim",
                                                   "v_head_dim")}


class Transformer(nn.Module):
    """The encoder-decoder of the paper, with embeddings, positions and the output layer; or one of its stacks.

    ``arch="decoder-only"`` keeps the decoder without cross-attention (GPT, Llama); ``"encoder-only"``
    keeps the encoder (BERT). Either reads one sequence of M tokens and leaves out the paper's sqrt(E)
    embedding scale and the output layer's bias, as those models do.

    Shape:
        src (N, M) and tgt (N, M_target) token ids -> logits (N, M_target, vocab_size).
        src_mask (M, M), tgt_mask (M_target, M_target), memory_mask (M_target, M);
        *_key_padding_mask (N, M) or (N, M_target). Boolean True means blocked.
        Decoder-only: tgt (N, M) alone, the src None; encoder-only: src (N, M) alone. Logits (N, M, vocab_size).
    """

    def __init__(self, *, vocab_size: int, E: int = 512, nhead: int = 8, layers: int = 6,
                 d_ff: int | None = None, positional: str = "sinusoidal", max_len: int = 512,
                 tie_embeddings: bool = False, residual: bool = True, arch: str = "encoder-decoder",
                 norm_first: bool = False, norm: str = "layernorm", activation: str = "relu",
                 nhead_kv: int | None = None, bias: bool = True, head_dim: int | None = None, qk_norm: bool = False,
                 window: int = 0, global_every: int = 0, n_experts: int = 0, top_k: int | None = None,
                 n_shared_experts: int = 0, d_ff_expert: int | None = None, first_dense_layers: int = 0,
                 norm_topk: bool = True, latent: dict[str, int] | None = None, relative_buckets: int = 32,
                 relative_max_distance: int = 128, scale_scores: bool = True, scale_embeddings: bool = True,
                 device=None):
        super().__init__()
        d_ff = 4 * E if d_ff is None else d_ff
        self.E, self.nhead, self.vocab_size, self.arch = E, nhead, vocab_size, arch
        paper = arch == "encoder-decoder"
        parts = dict(nhead_kv=nhead_kv, norm=norm, norm_first=norm_first, activation=activation, bias=bias,
                     head_dim=head_dim, qk_norm=qk_norm, latent=latent, scale=scale_scores)
        # Each layer's window (0: full) and experts (None: the dense FFN, as in the first_dense_layers).
        self.windows = [window if windowed(i, window, global_every) else 0 for i in range(layers)]
        moe = dict(n_experts=n_experts, top_k=top_k or min(2, n_experts), d_ff_expert=d_ff_expert or d_ff,
                   n_shared_experts=n_shared_experts, norm_topk=norm_topk)
        experts = [moe if n_experts and i >= first_dense_layers else None for i in range(layers)]
        scale = paper and scale_embeddings
        self.src_embed = TokenEmbedding(vocab_size, E, scale, device=device)
        # Tied: one matrix serves both embeddings and the pre-softmax layer (paper, section 3.4).
        separate = paper and not tie_embeddings
        self.tgt_embed = TokenEmbedding(vocab_size, E, scale, device=device) if separate else self.src_embed
        # RoPE turns each head's d_k dimensions; under latent attention only its rope_head_dim part, in DeepSeek's
        # pairs of neighbours.
        rotary = (head_dim or E // nhead) if latent is None else latent["rope_head_dim"]
        self.positional = PositionalEncoding(E, positional, max_len, rotary, device=device,
                                             interleaved=latent is not None)

        def relative(bidirectional: bool, i: int) -> RelativePositionBias | None:
            """The stack's bias table, for its first layer; every other layer reads that one."""
            if positional != "relative" or i > 0:
                return None
            return RelativePositionBias(nhead, relative_buckets, relative_max_distance, bidirectional, device)

        self.encoder = None if arch == "decoder-only" else nn.ModuleList(
            EncoderLayer(E, nhead, d_ff, residual, device, experts=experts[i], relative=relative(True, i), **parts)
            for i in range(layers))
        self.decoder = None if arch == "encoder-only" else nn.ModuleList(
            DecoderLayer(E, nhead, d_ff, residual, device, cross=paper, window=self.windows[i], experts=experts[i],
                         relative=relative(False, i), **parts) for i in range(layers))
        self.generator = nn.Linear(E, vocab_size, bias=bias and paper, device=device)
        # T5 scales the shared matrix where it leaves the model instead of where it enters: the decoder output
        # times 1/sqrt(E) before a tied output layer.
        self.output_scale = E ** -0.5 if paper and tie_embeddings and not scale_embeddings else None
        if tie_embeddings:
            self.generator.weight = self.tgt_embed.lookup.weight
        # Pre-norm leaves a stack's output un-normalised: one final norm after each stack (GPT-2's ln_f).
        self.encoder_norm = make_norm(norm, E, bias, device) if norm_first and self.encoder is not None else None
        self.decoder_norm = make_norm(norm, E, bias, device) if norm_first and self.decoder is not None else None

    @classmethod
    def from_config(cls, cfg: TransformerConfig, device=None, residual: bool = True) -> "Transformer":
        """Build the model a config describes, with weights seeded by ``cfg.seed`` (none on the meta device)."""
        return seeded(cls, vocab_size=cfg.vocab_size, E=cfg.E, nhead=cfg.nhead, layers=cfg.layers, d_ff=cfg.d_ff,
                      positional=cfg.positional, max_len=cfg.max_len, tie_embeddings=cfg.tie_embeddings,
                      residual=residual, arch=cfg.arch, norm_first=cfg.norm_first, norm=cfg.norm,
                      activation=cfg.activation, nhead_kv=cfg.nhead_kv, bias=cfg.bias, head_dim=cfg.head_dim,
                      qk_norm=cfg.qk_norm, window=cfg.window, global_every=cfg.global_every, n_experts=cfg.n_experts,
                      top_k=cfg.top_k, n_shared_experts=cfg.n_shared_experts, d_ff_expert=cfg.d_ff_expert,
                      first_dense_layers=cfg.first_dense_layers, norm_topk=cfg.norm_topk, latent=latent_widths(cfg),
                      relative_buckets=cfg.relative_buckets, relative_max_distance=cfg.relative_max_distance,
                      scale_scores=cfg.scale_scores, scale_embeddings=cfg.scale_embeddings, device=device,
                      seed=cfg.seed)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)
    generate_key_padding_mask = staticmethod(generate_key_padding_mask)

    def embed(self, tokens: Tensor, which: str, rec: Recorder | None = None, start: int = 0) -> Tensor:
        """Token embedding plus positional encoding, for ``which`` = 'src' or 'tgt'; RoPE and "none" add nothing."""
        table = self.src_embed if which == "src" else self.tgt_embed
        record(rec, which + ".tokens", tokens)
        emb = record(rec, which + ".embed", table(tokens))  # (N, L) -> (N, L, E)
        pos = self.positional(tokens.shape[1], emb.device, emb.dtype, start)  # (L, E), RoPE's (L, d_k), or None
        if pos is not None:
            record(rec, which + ".pos", pos)
        if self.positional.kind not in PositionalEncoding.ADDED:
            return record(rec, which + ".sum", emb)  # (N, L, E)
        return record(rec, which + ".sum", emb + pos)  # (N, L, E) + (L, E) broadcasts to (N, L, E)

    def rotation(self, L: int, device, start: int = 0) -> Tensor | None:
        """RoPE's angles (L, d_k) for the attention layers, or None when positions are added or absent."""
        return self.positional(L, device, start=start) if self.positional.kind == "rope" else None

    def encode(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
               rec: Recorder | None = None) -> Tensor:
        """Source ids (N, M) -> memory (N, M, E), the encoder output the decoder attends to."""
        x = self.embed(src, "src", rec)  # (N, M, E)
        M = src.shape[1]
        rope = self.rotation(M, x.device)  # (M, d_k) or None
        relative = self.encoder[0].relative
        bias = None if relative is None else relative(M, M, 0, x.device, rec, "enc.")  # (nhead, M, M)
        for i, layer in enumerate(self.encoder):
            x = layer(x, src_mask, src_key_padding_mask, rec, f"enc.{i}.", rope, position_bias=bias)  # (N, M, E)
        x = x if self.encoder_norm is None else self.encoder_norm(x)  # (N, M, E)
        return record(rec, "memory", x)

    def decode(self, tgt: Tensor, memory: Tensor | None, tgt_mask: Tensor | None = None,
               memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
               memory_key_padding_mask: Tensor | None = None, rec: Recorder | None = None,
               cache: list[dict[str, Tensor]] | None = None) -> Tensor:
        """Target ids (N, M_target) and memory (N, M, E) -> decoder output (N, M_target, E).

        ``cache`` (one dict per layer) holds earlier positions' keys and values: ``tgt`` is then only the new tokens.
        A windowed layer attends under its band mask (causal too) instead of ``tgt_mask``.
        """
        start = cache[0].get("seen", 0) if cache else 0  # positions already cached
        L = tgt.shape[1]
        x = self.embed(tgt, "tgt", rec, start)  # (N, M_target, E)
        rope = self.rotation(L, x.device, start)  # (M_target, d_k) or None
        relative = self.decoder[0].relative  # the new queries sit after the cached keys: S = start + L
        bias = None if relative is None else relative(L, start + L, start, x.device, rec, "dec.")  # (nhead, L, S)
        for i, layer in enumerate(self.decoder):
            mask = tgt_mask
            if self.windows[i]:  # its keys: what its rolling buffer holds, then the L new positions
                held = cache[i]["k"].shape[2] if cache and "k" in cache[i] else 0
                mask = sliding_window_mask(L, held + L, self.windows[i], x.device)  # (L, held + L)
            x = layer(x, memory, mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                      rec, f"dec.{i}.", rope, cache[i] if cache else None, bias)  # (N, M_target, E)
        x = x if self.decoder_norm is None else self.decoder_norm(x)  # (N, M_target, E)
        return record(rec, "dec.out", x)

    def output(self, out: Tensor, rec: Recorder | None = None) -> Tensor:
        """A stack's output (N, L, E) -> logits (N, L, vocab_size); T5's tied output layer first scales by E^-0.5."""
        if self.output_scale is not None:
            out = out * self.output_scale  # (N, L, E)
        return record(rec, "logits", self.generator(out))  # (N, L, E) -> (N, L, vocab_size)

    def forward(self, src: Tensor | None, tgt: Tensor | None = None, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, rec: Recorder | None = None,
                cache: list[dict[str, Tensor]] | None = None) -> Tensor:
        """Logits (N, M_target, vocab_size); the probabilities are recorded as 'probs'."""
        memory = None if self.encoder is None else self.encode(src, src_mask, src_key_padding_mask, rec)  # (N, M, E)
        out = memory if self.decoder is None else self.decode(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                                                              memory_key_padding_mask, rec, cache)  # (N, M_target, E)
        logits = self.output(out, rec)  # (N, M_target, vocab_size)
        if rec is not None:
            record(rec, "probs", torch.softmax(logits, dim=-1))  # (N, M_target, vocab_size)
        return logits


class CausalLM(nn.Module):
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
        self.generator = nn.Linear(E, vocab_size, device=device)

    def forward(self, tokens: Tensor, causal: bool = True, rec: Recorder | None = None) -> Tensor:
        """Token ids (N, L) -> next-token logits (N, L, vocab_size)."""
        L = tokens.shape[1]
        x = self.embed(tokens)  # (N, L, E)
        x = x + self.positional(L, x.device, x.dtype)  # (N, L, E) + (L, E) -> (N, L, E)
        mask = generate_square_subsequent_mask(L, x.device) if causal else None  # (L, L)
        for i, block in enumerate(self.blocks):
            x = block(x, mask, None, rec, f"block.{i}.")  # (N, L, E)
        return self.generator(x)  # (N, L, E) -> (N, L, vocab_size)


def build_causal_lm(seed: int = 0, device=None, **sizes) -> CausalLM:
    """A CausalLM with weights seeded by ``seed``, as Transformer.from_config seeds its own."""
    return seeded(CausalLM, device=device, seed=seed, **sizes)
