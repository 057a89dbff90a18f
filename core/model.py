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
model writes named tensors into it and keeps nothing itself, so one model object can serve many
callers at once. Nothing here branches on tensor values, so the same code runs on PyTorch's meta
device to get shapes without allocating memory.
"""

from __future__ import annotations

import math
from typing import MutableMapping

import torch
from torch import Tensor, nn

from .config import TransformerConfig
from .weights import seeded

Recorder = MutableMapping[str, Tensor]


def record(rec: Recorder | None, name: str, tensor: Tensor) -> Tensor:
    """The single point every recorded tensor passes through; returns the tensor unchanged.

    A tensor in a gradient graph is kept detached, so holding it does not hold the graph.
    """
    if rec is not None:
        rec[name] = tensor.detach() if tensor.requires_grad else tensor
    return tensor


def generate_square_subsequent_mask(sz: int, device: torch.device | str | None = None) -> Tensor:
    """Causal mask (sz, sz): True above the diagonal, so position i cannot see positions > i.

    The diagonal stays visible: a position may attend to itself. PyTorch's method of this name
    returns the float form (-inf above the diagonal, 0 elsewhere); both block the same pairs.
    """
    return torch.ones(sz, sz, dtype=torch.bool, device=device).triu(diagonal=1)  # (sz, sz)


def generate_key_padding_mask(tokens: Tensor, pad_id: int = 0) -> Tensor:
    """Key padding mask (N, L): True where the token is padding, so no query attends to it."""
    return tokens == pad_id  # (N, L)


def apply_mask(scores: Tensor, mask: Tensor | None) -> Tensor:
    """Blocked pairs (bool True) get -inf, which softmax turns into 0; a float mask is added as it is.

    In place: ``scores`` is a fresh tensor, and a second one of its size would cost memory for nothing.
    """
    if mask is None:
        return scores
    if mask.dtype == torch.bool:
        return scores.masked_fill_(mask, float("-inf"))  # mask broadcasts to (N, nhead, L, S)
    return scores.add_(mask)  # (N, nhead, L, S)


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


class TokenEmbedding(nn.Module):
    """Token ids to vectors, scaled by sqrt(E) as in the paper (section 3.4)."""

    def __init__(self, vocab_size: int, E: int, device=None):
        super().__init__()
        self.E = E
        self.lookup = nn.Embedding(vocab_size, E, device=device)

    def forward(self, tokens: Tensor) -> Tensor:
        return self.lookup(tokens) * math.sqrt(self.E)  # (N, L) -> (N, L, E)


class PositionalEncoding(nn.Module):
    """Position vectors added to the token embeddings: fixed sinusoids, or a learned table."""

    def __init__(self, E: int, kind: str = "sinusoidal", max_len: int = 512, device=None):
        super().__init__()
        if kind not in ("sinusoidal", "learned"):
            raise ValueError(f"positional kind {kind!r} must be 'sinusoidal' or 'learned'")
        self.E, self.kind, self.max_len = E, kind, max_len
        # Learned: one trained row per position, read in order (no ids to look up).
        self.table = nn.Parameter(torch.empty(max_len, E, device=device)) if kind == "learned" else None

    def forward(self, L: int, device=None, dtype: torch.dtype = torch.float32) -> Tensor:
        if self.table is None:
            return sinusoidal_table(L, self.E, device=device, dtype=dtype)  # (L, E)
        if L > self.max_len:
            raise ValueError(
                f"sequence length {L} is longer than the learned positional table (max_len="
                f"{self.max_len}): a learned table has no row for position {self.max_len}; "
                f"use a shorter sequence, a larger max_len, or sinusoidal encoding"
            )
        return self.table[:L]  # (max_len, E) -> (L, E)


class MultiHeadAttention(nn.Module):
    """nhead scaled dot-product attentions side by side, each on a d_k-wide slice of E (section 3.2.2).

    W_q, W_k and W_v hold every head's W^Q_h, W^K_h, W^V_h (each E x d_k) side by side, so one
    product gives all heads' queries, keys or values at once; W_o is the output projection W^O.
    """

    def __init__(self, E: int, nhead: int, device=None):
        super().__init__()
        if E % nhead:
            raise ValueError(f"nhead={nhead} must divide E={E}")
        self.E, self.nhead, self.d_k = E, nhead, E // nhead
        self.W_q = nn.Linear(E, E, device=device)
        self.W_k = nn.Linear(E, E, device=device)
        self.W_v = nn.Linear(E, E, device=device)
        self.W_o = nn.Linear(E, E, device=device)

    def head_weights(self) -> dict[str, Tensor]:
        """Every head's W^Q, W^K, W^V, each (nhead, E, d_k), so that head h's q = x @ W_Q[h] + b: views, no copies."""
        def per_head(linear: nn.Linear) -> Tensor:
            return linear.weight.view(self.nhead, self.d_k, self.E).transpose(1, 2)  # (E, E) -> (nhead, E, d_k)
        return {"W_Q": per_head(self.W_q), "W_K": per_head(self.W_k), "W_V": per_head(self.W_v)}

    def forward(self, x: Tensor, context: Tensor, attn_mask: Tensor | None = None,
                key_padding_mask: Tensor | None = None, rec: Recorder | None = None,
                prefix: str = "") -> Tensor:
        """Queries from ``x`` (N, L, E); keys and values from ``context`` (N, S, E).

        Self-attention passes the same tensor twice; cross-attention passes the encoder memory.
        ``attn_mask`` is (L, S) and ``key_padding_mask`` (N, S).
        """
        N, L, E = x.shape
        S = context.shape[1]
        q = self.W_q(x).view(N, L, self.nhead, self.d_k).transpose(1, 2)  # (N, L, E) -> (N, nhead, L, d_k)
        k = self.W_k(context).view(N, S, self.nhead, self.d_k).transpose(1, 2)  # (N, S, E) -> (N, nhead, S, d_k)
        v = self.W_v(context).view(N, S, self.nhead, self.d_k).transpose(1, 2)  # (N, S, E) -> (N, nhead, S, d_k)
        record(rec, prefix + "q", q)
        record(rec, prefix + "k", k)
        record(rec, prefix + "v", v)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)  # (N, nhead, L, S)
        scores = apply_mask(scores, attn_mask)  # (L, S) broadcasts over N and nhead
        if key_padding_mask is not None:
            scores = apply_mask(scores, key_padding_mask[:, None, None, :])  # (N, S) -> (N, 1, 1, S)
        record(rec, prefix + "scores", scores)
        weights = torch.softmax(scores, dim=-1)  # (N, nhead, L, S): each row sums to 1
        record(rec, prefix + "weights", weights)
        heads = weights @ v  # (N, nhead, L, S) @ (N, nhead, S, d_k) -> (N, nhead, L, d_k)
        record(rec, prefix + "heads", heads)
        concat = heads.transpose(1, 2).reshape(N, L, E)  # (N, L, nhead, d_k) -> (N, L, E)
        record(rec, prefix + "concat", concat)
        out = self.W_o(concat)  # (N, L, E)
        return record(rec, prefix + "out", out)


class FeedForward(nn.Module):
    """Position-wise FFN: Linear(E, d_ff), ReLU, Linear(d_ff, E), the same for every position (section 3.3)."""

    def __init__(self, E: int, d_ff: int, device=None):
        super().__init__()
        self.linear1 = nn.Linear(E, d_ff, device=device)
        self.linear2 = nn.Linear(d_ff, E, device=device)

    def forward(self, x: Tensor, rec: Recorder | None = None, prefix: str = "") -> Tensor:
        hidden = torch.relu(self.linear1(x))  # (N, L, E) -> (N, L, d_ff)
        record(rec, prefix + "hidden", hidden)
        out = self.linear2(hidden)  # (N, L, d_ff) -> (N, L, E)
        return record(rec, prefix + "out", out)


class EncoderLayer(nn.Module):
    """Self-attention then FFN, each wrapped as LayerNorm(x + sublayer(x)) (post-norm, section 3.1).

    ``residual=False`` drops the skip paths (x = LayerNorm(sublayer(x))); only experiments use it,
    to show what the skip connections are for. Under a causal mask this is a GPT-style block.
    """

    def __init__(self, E: int, nhead: int, d_ff: int, residual: bool = True, device=None):
        super().__init__()
        self.residual = residual
        self.self_attn = MultiHeadAttention(E, nhead, device=device)
        self.ffn = FeedForward(E, d_ff, device=device)
        self.norm1 = nn.LayerNorm(E, device=device)
        self.norm2 = nn.LayerNorm(E, device=device)

    def forward(self, x: Tensor, attn_mask: Tensor | None = None, key_padding_mask: Tensor | None = None,
                rec: Recorder | None = None, prefix: str = "") -> Tensor:
        a = self.self_attn(x, x, attn_mask, key_padding_mask, rec, prefix + "self_attn.")  # (N, M, E)
        x = self.norm1(x + a if self.residual else a)  # (N, M, E)
        record(rec, prefix + "ffn_in", x)
        f = self.ffn(x, rec, prefix + "ffn.")  # (N, M, E)
        x = self.norm2(x + f if self.residual else f)  # (N, M, E)
        return record(rec, prefix + "out", x)


class DecoderLayer(nn.Module):
    """Masked self-attention, then cross-attention over the encoder memory, then the FFN."""

    def __init__(self, E: int, nhead: int, d_ff: int, residual: bool = True, device=None):
        super().__init__()
        self.residual = residual
        self.self_attn = MultiHeadAttention(E, nhead, device=device)
        self.cross_attn = MultiHeadAttention(E, nhead, device=device)
        self.ffn = FeedForward(E, d_ff, device=device)
        self.norm1 = nn.LayerNorm(E, device=device)
        self.norm2 = nn.LayerNorm(E, device=device)
        self.norm3 = nn.LayerNorm(E, device=device)

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


class Transformer(nn.Module):
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
        self.generator = nn.Linear(E, vocab_size, device=device)
        if tie_embeddings:
            self.generator.weight = self.tgt_embed.lookup.weight

    @classmethod
    def from_config(cls, cfg: TransformerConfig, device=None, residual: bool = True) -> "Transformer":
        """Build the model a config describes, with weights seeded by ``cfg.seed`` (none on the meta device)."""
        return seeded(cls, vocab_size=cfg.vocab_size, E=cfg.E, nhead=cfg.nhead, layers=cfg.layers, d_ff=cfg.d_ff,
                      positional=cfg.positional, max_len=cfg.max_len, tie_embeddings=cfg.tie_embeddings,
                      residual=residual, device=device, seed=cfg.seed)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)
    generate_key_padding_mask = staticmethod(generate_key_padding_mask)

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
        for i, layer in enumerate(self.encoder):
            x = layer(x, src_mask, src_key_padding_mask, rec, f"enc.{i}.")  # (N, M, E)
        return record(rec, "memory", x)

    def decode(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
               memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
               memory_key_padding_mask: Tensor | None = None, rec: Recorder | None = None) -> Tensor:
        """Target ids (N, M_target) and memory (N, M, E) -> decoder output (N, M_target, E)."""
        x = self.embed(tgt, "tgt", rec)  # (N, M_target, E)
        for i, layer in enumerate(self.decoder):
            x = layer(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                      rec, f"dec.{i}.")  # (N, M_target, E)
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
