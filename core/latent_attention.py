"""Multi-head latent attention (MLA), as DeepSeek-V2 and DeepSeek-V3 define it, beside MultiHeadAttention.

Why it exists: a KV cache keeps every head's K and V for every position, 2 · nhead · d_k numbers per
token and layer. MLA keeps one narrow latent c_KV (kv_lora_rank wide) and one rotary key shared by all
heads (rope_head_dim wide) instead, and makes every head's K and V back from the latent with one
up-projection. DeepSeek-V3 caches 512 + 64 = 576 numbers per token and layer where its 128 heads would
need 128 · (192 + 128) = 40,960.

RoPE cannot turn a key made back from a latent (the turn would sit between the latent and the
up-projection, so nothing could be cached once for all positions); so each query and key is split in
two parts (DeepSeek-V2, section 2.1.3): ``nope_head_dim`` dimensions without positions, made from the
latent, and ``rope_head_dim`` dimensions that RoPE turns, the key's part shared by every head. The rotary
pairs are neighbours (2i, 2i + 1), as in DeepSeek's own weights.

Legend, as in core/model.py, plus:
    d_c = kv_lora_rank    d_q = q_lora_rank    d_nope = nope_head_dim    d_rope = rope_head_dim
    d_v = v_head_dim      d_qk = d_nope + d_rope (one head's query and key width)
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .positions import apply_rope
from .recording import Recorder, apply_mask, record

LATENT_NORM_EPS = 1e-6  # DeepSeek's RMSNorm on the latents


class LatentAttention(nn.Module):
    """Self-attention whose keys and values come back from one cached latent per position.

    Queries: W_q (E -> nhead · d_qk), or, with ``q_lora_rank`` > 0, a compression W_dq (E -> d_q), an
    RMSNorm and W_uq (d_q -> nhead · d_qk), which saves weights but not cache. Keys and values: W_dkv
    (E -> d_c + d_rope) gives the latent c_KV and the shared rotary key k_rope; an RMSNorm on c_KV;
    W_ukv (d_c -> nhead · (d_nope + d_v)) makes every head's unturned key and its value. W_o brings the
    nhead · d_v concatenated heads back to E. ``bias`` gives W_dq, W_dkv and W_o biases, where DeepSeek's
    ``attention_bias`` puts them; the up-projections never have one.

    Shape:
        x (N, L, E) -> (N, L, E); rope (L, d_rope), the interleaved table; cache 'latent' (N, S, d_c)
        and 'k_rope' (N, S, d_rope), S counting the cached positions and this call's.
    """

    def __init__(self, E: int, nhead: int, *, kv_lora_rank: int, q_lora_rank: int, rope_head_dim: int,
                 nope_head_dim: int, v_head_dim: int, bias: bool = True, device=None):
        super().__init__()
        self.E, self.nhead = E, nhead
        self.kv_lora_rank, self.q_lora_rank = kv_lora_rank, q_lora_rank
        self.rope_head_dim, self.nope_head_dim, self.v_head_dim = rope_head_dim, nope_head_dim, v_head_dim
        self.qk_head_dim = nope_head_dim + rope_head_dim
        q_width = nhead * self.qk_head_dim
        if q_lora_rank:
            self.W_q = None
            self.W_dq = nn.Linear(E, q_lora_rank, bias=bias, device=device)
            self.q_norm = nn.RMSNorm(q_lora_rank, eps=LATENT_NORM_EPS, device=device)
            self.W_uq = nn.Linear(q_lora_rank, q_width, bias=False, device=device)
        else:
            self.W_q = nn.Linear(E, q_width, bias=False, device=device)
            self.W_dq = self.q_norm = self.W_uq = None
        self.W_dkv = nn.Linear(E, kv_lora_rank + rope_head_dim, bias=bias, device=device)
        self.kv_norm = nn.RMSNorm(kv_lora_rank, eps=LATENT_NORM_EPS, device=device)
        self.W_ukv = nn.Linear(kv_lora_rank, nhead * (nope_head_dim + v_head_dim), bias=False, device=device)
        self.W_o = nn.Linear(nhead * v_head_dim, E, bias=bias, device=device)

    def head_weights(self) -> dict[str, Tensor]:
        """No per-head W^Q, W^K, W^V: a head's keys and values come from the latent, not from E (views of W_ukv
        are the closest thing; the trace shows the latent itself)."""
        return {}

    def query(self, x: Tensor, rec: Recorder | None, prefix: str) -> Tensor:
        """Every head's query, (N, L, E) -> (N, nhead, L, d_qk), through the compressed query when there is one."""
        N, L, _ = x.shape
        if self.W_q is not None:
            q = self.W_q(x)  # (N, L, E) -> (N, L, nhead · d_qk)
        else:
            c_q = record(rec, prefix + "q_latent", self.q_norm(self.W_dq(x)))  # (N, L, E) -> (N, L, d_q)
            q = self.W_uq(c_q)  # (N, L, d_q) -> (N, L, nhead · d_qk)
        return q.view(N, L, self.nhead, self.qk_head_dim).transpose(1, 2)  # (N, nhead, L, d_qk)

    def forward(self, x: Tensor, context: Tensor, attn_mask: Tensor | None = None,
                key_padding_mask: Tensor | None = None, rec: Recorder | None = None,
                prefix: str = "", rope: Tensor | None = None, cache: dict[str, Tensor] | None = None) -> Tensor:
        """Self-attention of ``x`` (N, L, E); ``context`` is ``x`` itself (called as MultiHeadAttention is).

        ``attn_mask`` is (L, S), ``key_padding_mask`` (N, S); ``rope`` (L, d_rope) turns the rotary parts.
        """
        N, L, _ = x.shape
        q_nope, q_rope = self.query(x, rec, prefix).split(
            [self.nope_head_dim, self.rope_head_dim], dim=-1)  # (N, nhead, L, d_nope), (N, nhead, L, d_rope)
        c_kv, k_rope = self.W_dkv(x).split(
            [self.kv_lora_rank, self.rope_head_dim], dim=-1)  # (N, L, E) -> (N, L, d_c), (N, L, d_rope)
        c_kv = self.kv_norm(c_kv)  # (N, L, d_c)
        q_rope = apply_rope(q_rope, rope, interleaved=True)  # (N, nhead, L, d_rope)
        k_rope = apply_rope(k_rope, rope, interleaved=True)  # (N, L, d_rope): one key for all heads
        if cache is not None:  # only the latent and the rotary key are kept: d_c + d_rope numbers a position
            c_kv = cache["latent"] = (torch.cat((cache["latent"], c_kv), dim=1)
                                      if "latent" in cache else c_kv)  # (N, S, d_c)
            k_rope = cache["k_rope"] = (torch.cat((cache["k_rope"], k_rope), dim=1)
                                        if "k_rope" in cache else k_rope)  # (N, S, d_rope)
            cache["seen"] = cache.get("seen", 0) + L  # positions so far, as every layer's cache counts them
        record(rec, prefix + "latent", c_kv)  # (N, S, d_c)
        record(rec, prefix + "k_rope", k_rope)  # (N, S, d_rope)
        S = c_kv.shape[1]
        kv = self.W_ukv(c_kv).view(N, S, self.nhead, -1)  # (N, S, d_c) -> (N, S, nhead, d_nope + d_v)
        k_nope, v = kv.transpose(1, 2).split(
            [self.nope_head_dim, self.v_head_dim], dim=-1)  # (N, nhead, S, d_nope), (N, nhead, S, d_v)
        k_rope = k_rope[:, None].expand(N, self.nhead, S, self.rope_head_dim)  # (N, S, d_rope) -> (N, nhead, S, d_rope)
        k = torch.cat((k_nope, k_rope), dim=-1)  # (N, nhead, S, d_qk)
        q = torch.cat((q_nope, q_rope), dim=-1)  # (N, nhead, L, d_qk)
        record(rec, prefix + "q", q)
        record(rec, prefix + "k", k)
        record(rec, prefix + "v", v)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.qk_head_dim)  # (N, nhead, L, S)
        scores = apply_mask(scores, attn_mask)  # (L, S) broadcasts over N and nhead
        if key_padding_mask is not None:
            scores = apply_mask(scores, key_padding_mask[:, None, None, :])  # (N, S) -> (N, 1, 1, S)
        record(rec, prefix + "scores", scores)
        weights = torch.softmax(scores, dim=-1)  # (N, nhead, L, S): each row sums to 1
        record(rec, prefix + "weights", weights)
        heads = weights @ v  # (N, nhead, L, S) @ (N, nhead, S, d_v) -> (N, nhead, L, d_v)
        record(rec, prefix + "heads", heads)
        concat = heads.transpose(1, 2).reshape(N, L, self.nhead * self.v_head_dim)  # (N, L, nhead · d_v)
        record(rec, prefix + "concat", concat)
        out = self.W_o(concat)  # (N, L, nhead · d_v) -> (N, L, E)
        return record(rec, prefix + "out", out)
