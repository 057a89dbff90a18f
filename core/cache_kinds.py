"""The KV cache of one config against the other ways to attend at its sizes: multi-head (MHA), grouped-query (GQA),
multi-query (MQA), multi-head latent (MLA) attention and a sliding window, each one line of bytes against the
tokens held, M + G.

Pure arithmetic on the config, so every size is free to draw. A kind caches ``numbers`` a token in each layer:
K and V, 2 · nhead_kv · d_h, for MHA, GQA and MQA; the latent and the shared rotary key, kv_lora_rank +
rope_head_dim, for MLA. A windowed layer holds at most W positions, so a window's line goes flat at W.

d_h is each head's width: d_k, or for a latent-attention config its heads' width without the rotary part
(nope_head_dim), as the DeepSeek-V2 paper's table counts multi-head attention (2 · n_h · d_h · layers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .config import TransformerConfig, divisors
from .memory import FLOAT_BYTES, FP16_BYTES, kv_cache_bytes, kv_cache_shape

MISTRAL_WINDOW = 4096  # the window drawn for a config that has none: Mistral-7B's


@dataclass(frozen=True)
class CacheKind:
    """One way to attend at the config's sizes, and what it caches."""

    name: str  # "MHA", "GQA", "MQA", "MLA" or "window"
    label: str  # the legend's words, with its widths
    numbers: int  # numbers one layer caches a token
    window: int = 0  # W: a windowed layer holds at most W positions; 0 for none
    global_every: int = 0  # with a window, every k-th layer stays full (core.config.windowed)
    short: str = ""  # the label for a narrow table, when the legend's is long

    @property
    def name_in_table(self) -> str:
        return self.short or self.label

    def held(self, cfg: TransformerConfig, tokens: int) -> int:
        """Positions all the layers together hold with ``tokens`` in the sequence."""
        if not self.window:
            return cfg.layers * tokens
        full = sum(1 for i in range(cfg.layers) if self.global_every and (i + 1) % self.global_every == 0)
        return full * tokens + (cfg.layers - full) * min(tokens, self.window)

    def bytes(self, cfg: TransformerConfig, tokens: int, bytes_per_number: int = FLOAT_BYTES) -> int:
        """The cache of N sequences of ``tokens`` positions."""
        return cfg.N * self.held(cfg, tokens) * self.numbers * bytes_per_number

    def per_token(self, cfg: TransformerConfig, bytes_per_number: int = FLOAT_BYTES) -> int:
        """What one more position of one sequence adds, while no window is full: layers · numbers · bytes."""
        return cfg.layers * self.numbers * bytes_per_number


def head_width(cfg: TransformerConfig) -> int:
    """d_h: d_k, or latent attention's nope_head_dim (its heads' width without the rotary part)."""
    return cfg.nope_head_dim if cfg.attention == "mla" else cfg.d_k


def kv_kinds(cfg: TransformerConfig) -> dict[str, int]:
    """nhead_kv for MHA (nhead), GQA (the config's own when it groups, else the divisor of nhead nearest
    nhead / 8, Llama-2-70B's ratio) and MQA (1), without repeats: at nhead = 1 the three are one."""
    between = [d for d in divisors(cfg.nhead) if 1 < d < cfg.nhead]
    gqa = cfg.nhead_kv if cfg.nhead_kv in between else min(between, key=lambda d: abs(d - cfg.nhead / 8),
                                                                   default=None)
    out: dict[str, int] = {}
    for name, kv in {"MHA": cfg.nhead, "GQA": gqa, "MQA": 1}.items():
        if kv is not None and kv not in out.values():
            out[name] = kv
    return out


def latent_widths(cfg: TransformerConfig) -> tuple[int, int]:
    """(kv_lora_rank, rope_head_dim): the config's own, or DeepSeek-V2's ratios to d_k (4·d_k and d_k / 2, even),
    as core.config derives them."""
    if cfg.attention == "mla":
        return cfg.kv_lora_rank, cfg.rope_head_dim
    return 4 * cfg.d_k, max(2, cfg.d_k // 2 // 2 * 2)


def cache_kinds(cfg: TransformerConfig) -> list[CacheKind]:
    """MHA, GQA and MQA (without repeats), MLA and a window, at the config's sizes. The window is the config's own
    W (and its full layers), else Mistral-7B's 4096 in every layer, over the config's nhead_kv K/V heads."""
    d_h, kv_heads = head_width(cfg), cfg.nhead_kv
    kinds = [CacheKind(name, f"{name} (nhead_kv = {kv})", 2 * kv * d_h) for name, kv in kv_kinds(cfg).items()]
    d_c, d_rope = latent_widths(cfg)
    widths = "" if cfg.attention == "mla" else ", DeepSeek-V2's ratios to d_k"
    kinds.append(CacheKind("MLA", f"MLA (kv_lora_rank + rope_head_dim = {d_c} + {d_rope}{widths})", d_c + d_rope,
                           short=f"MLA (latent {d_c} + rotary key {d_rope})"))
    W = cfg.window or MISTRAL_WINDOW
    full = f", one layer in {cfg.global_every} full" if cfg.global_every else ""
    kinds.append(CacheKind("window", f"window W = {W:,} (nhead_kv = {kv_heads}{full})", 2 * kv_heads * d_h, W,
                           cfg.global_every, short=f"window W = {W:,}"))
    return kinds


def own_kind(cfg: TransformerConfig, kinds: list[CacheKind]) -> CacheKind:
    """The kind the config itself is: its window, MLA, or the MHA/GQA/MQA line with its nhead_kv."""
    if cfg.window:
        return next(k for k in kinds if k.name == "window")
    if cfg.attention == "mla":
        return next(k for k in kinds if k.name == "MLA")
    return next(k for k in kinds if k.name != "window" and k.numbers == 2 * cfg.nhead_kv * cfg.d_k)


@dataclass(frozen=True)
class KVCacheView:
    """What the explorer's KV-cache section draws for a decoder-only config after G new tokens: the cache's
    shape, its bytes, and every kind's bytes against the tokens held (float32, as this model runs; fp16 and bf16
    halve every figure)."""

    G: int
    shape: tuple[int, ...]  # (layers, 2, N, nhead_kv, M + G, d_k); latent attention's (layers, N, M + G, d_c + d_rope)
    bytes: int
    bytes_fp16: int
    kinds: list[CacheKind]
    points: list[dict]  # {"tokens", "attention", "bytes"} along a log scale of tokens
    chosen: dict  # the config's own point: tokens M + G, its kind's label, its bytes
    own: str  # the config's own kind's name

    def kind(self, name: str) -> CacheKind:
        return next(k for k in self.kinds if k.name == name)


def kv_cache_view(cfg: TransformerConfig, G: int) -> KVCacheView:
    """Every kind's bytes along a log scale of tokens, reaching past M + G and four windows, and the config's own
    point, from the same arithmetic as core.memory.kv_cache_bytes (the tests hold them equal)."""
    if cfg.arch != "decoder-only":
        raise ValueError(f"arch={cfg.arch!r} keeps no KV cache here; use arch='decoder-only'")
    if isinstance(G, bool) or not isinstance(G, int) or G < 0:
        raise ValueError(f"G={G!r} must be a whole number of new tokens, 0 or more")
    held = cfg.M + G
    kinds = cache_kinds(cfg)
    W = kinds[-1].window
    top = max(4 * W, 2 * held)
    grid = sorted({2 ** k for k in range(int(math.log2(top)) + 1)} | {held, W})
    points = [{"tokens": n, "attention": kind.label, "bytes": kind.bytes(cfg, n)} for kind in kinds for n in grid]
    own = own_kind(cfg, kinds)
    total = kv_cache_bytes(cfg, G)
    return KVCacheView(G=G, shape=kv_cache_shape(cfg, G), bytes=total,
                       bytes_fp16=kv_cache_bytes(cfg, G, bytes_per_number=FP16_BYTES), kinds=kinds, points=points,
                       chosen={"tokens": held, "attention": own.label, "bytes": own.bytes(cfg, held)}, own=own.name)


@dataclass(frozen=True)
class LatentSaving:
    """Latent attention's cache a token against multi-head attention's, counted as the DeepSeek-V2 paper's table
    counts it: (kv_lora_rank + rope_head_dim) · layers against 2 · nhead · d_h · layers."""

    layers: int
    kv_lora_rank: int
    rope_head_dim: int
    nhead: int
    d_h: int

    @property
    def mla(self) -> int:
        return (self.kv_lora_rank + self.rope_head_dim) * self.layers

    @property
    def mha(self) -> int:
        return 2 * self.nhead * self.d_h * self.layers

    @property
    def ratio(self) -> float:
        return self.mha / self.mla


def latent_saving(cfg: TransformerConfig) -> LatentSaving:
    """The DeepSeek-V2 table's comparison at a latent-attention config's sizes."""
    if cfg.attention != "mla":
        raise ValueError(f"attention={cfg.attention!r} caches no latent; use attention='mla'")
    return LatentSaving(cfg.layers, cfg.kv_lora_rank, cfg.rope_head_dim, cfg.nhead, head_width(cfg))
