"""TransformerConfig: the sizes a learner sets, validated once, in the learner's notation.

Every other module trusts a ``TransformerConfig``: it is frozen (so it can key a cache and be
shared between browser sessions) and every field is checked here, with a message that names the
field, the bad value and a way out, because a learner reads these messages in the app.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

# Upper limits. They are generous on purpose: large sizes are traced shape-only on the meta
# device (see core.trace), so these only stop values that make no sense at all.
MAX_N = 4096  # batch
MAX_M = 1_048_576  # source or target length (2**20 positions)
MAX_E = 65_536  # d_model
MAX_NHEAD = 1024
MAX_D_FF = 4 * MAX_E
MAX_VOCAB_SIZE = 4_000_000
MAX_LAYERS = 256
MAX_SEED = 2**31 - 1
# PyTorch counts a tensor's bytes in a signed 64-bit integer, even on meta: an attention map must stay under it.
MAX_TENSOR_BYTES = 2**63 - 1
FLOAT32_BYTES = 4

POSITIONAL_KINDS = ("sinusoidal", "learned", "rope", "none", "relative")
ARCHS = ("encoder-decoder", "decoder-only", "encoder-only")
NORMS = ("layernorm", "rmsnorm")
ACTIVATIONS = ("relu", "gelu", "swiglu")
ATTENTIONS = ("mha", "mla")

# Each whole-number field's range, lowest and highest allowed, in one place: the config checks against
# it, ``--help`` prints it and docs/cli.md's table of limits is tested against it.
RANGES: dict[str, tuple[int, int]] = {
    "N": (1, MAX_N),
    "M": (1, MAX_M),
    "E": (1, MAX_E),
    "nhead": (1, MAX_NHEAD),
    "vocab_size": (2, MAX_VOCAB_SIZE),
    "M_target": (1, MAX_M),
    "layers": (1, MAX_LAYERS),
    "d_ff": (1, MAX_D_FF),
    "max_len": (1, MAX_M),
    "seed": (0, MAX_SEED),
    # Multi-head latent attention's widths (attention="mla").
    "kv_lora_rank": (1, MAX_E),
    "q_lora_rank": (0, MAX_E),
    "rope_head_dim": (2, MAX_E),
    "nope_head_dim": (1, MAX_E),
    "v_head_dim": (1, MAX_E),
    "relative_buckets": (4, 1024),
    "relative_max_distance": (1, MAX_M),
}
# The fields only multi-head latent attention reads; attention="mha" leaves them unset.
MLA_FIELDS = ("kv_lora_rank", "q_lora_rank", "rope_head_dim", "nope_head_dim", "v_head_dim")

# --- Mixture of experts, head_dim, qk_norm and the sliding window -------------------------------------
MAX_EXPERTS = 1024
# These fields' ranges, kept apart from RANGES because each also depends on another field (top_k on
# n_experts, first_dense_layers on layers, global_every on window): the config checks that too.
PART_RANGES: dict[str, tuple[int, int]] = {
    "n_experts": (0, MAX_EXPERTS),
    "top_k": (1, MAX_EXPERTS),
    "n_shared_experts": (0, MAX_EXPERTS),
    "d_ff_expert": (1, MAX_D_FF),
    "first_dense_layers": (0, MAX_LAYERS - 1),
    "head_dim": (1, MAX_E),
    "window": (0, MAX_M),
    "global_every": (0, MAX_LAYERS),
}
# The MoE fields that mean nothing for a dense FFN, with the value that leaves them out.
MOE_UNSET: dict[str, Any] = {"top_k": None, "n_shared_experts": 0, "d_ff_expert": None, "first_dense_layers": 0,
                             "norm_topk": True}
# --- end of the MoE / head_dim / window block ---------------------------------------------------------


def divisors(n: int) -> list[int]:
    """All positive divisors of n, ascending: the nhead values a given E allows."""
    return [d for d in range(1, n + 1) if n % d == 0] if n > 0 else []


def longest_sequence(N: int, nhead: int) -> int:
    """The longest M (or M_target) whose attention maps PyTorch can size at this N and nhead."""
    return min(MAX_M, math.isqrt(MAX_TENSOR_BYTES // FLOAT32_BYTES // (N * nhead)))


def windowed(layer: int, window: int, global_every: int) -> bool:
    """Whether layer ``layer`` (from 0) attends through a window: every layer when global_every is 0, else all
    but layers k, 2k, ... counted from 1 (Gemma and GPT-OSS alternate so)."""
    return window > 0 and not (global_every and (layer + 1) % global_every == 0)


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name}={value!r} must be one of {', '.join(choices)}")


def _check_bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{name}={value!r} must be True or False")


def _check_int(name: str, value: Any, low: int, high: int, hint: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}={value!r} must be a whole number between {low} and {high}")
    if not low <= value <= high:
        extra = f"; {hint}" if hint else ""
        raise ValueError(f"{name}={value} is out of range: it must be between {low} and {high}{extra}")


@dataclass(frozen=True, kw_only=True)
class TransformerConfig:
    """Sizes and parts of a Transformer, named as in the learner's notes.

    ``arch`` picks the family: the paper's encoder-decoder, a decoder-only model (GPT, Llama) or an
    encoder-only one (BERT). ``M_target`` belongs to the encoder-decoder alone: it defaults to ``M``
    there and stays None for a single stack. ``d_ff`` defaults to ``4 * E``, ``nhead_kv`` (K/V heads,
    fewer for grouped-query attention) to ``nhead``, and ``max_len`` (the learned positional table's
    length) to the longer sequence.

    Mixture of experts: ``n_experts`` > 0 replaces the FFN of every layer after the ``first_dense_layers``
    by that many SwiGLU (or ``activation``) experts of width ``d_ff_expert`` (default d_ff); a router sends
    each token to ``top_k`` of them (default 2), ``norm_topk`` renormalising their weights to sum to 1, and
    every token also passes through ``n_shared_experts`` more. ``head_dim`` is d_k when it is not E // nhead
    (Qwen3); ``qk_norm`` puts an RMSNorm on each head's q and k. ``window`` > 0 lets a query see only the
    last ``window`` positions, itself included; ``global_every`` = k keeps every k-th layer full.
    """

    N: int = 2
    M: int = 8
    E: int = 16
    nhead: int = 2
    vocab_size: int = 100
    M_target: int | None = None
    layers: int = 2
    d_ff: int | None = None
    positional: str = "sinusoidal"
    max_len: int | None = None
    tie_embeddings: bool = False
    seed: int = 0
    arch: str = "encoder-decoder"
    norm_first: bool = False
    norm: str = "layernorm"
    activation: str = "relu"
    nhead_kv: int | None = None
    bias: bool = True
    # Multi-head latent attention (DeepSeek-V2/V3): unset widths follow the DeepSeek-V2 paper's ratios to d_k
    # (nope = v = d_k, rope = d_k/2 made even, kv_lora_rank = 4·d_k); q_lora_rank 0 leaves the query uncompressed.
    attention: str = "mha"
    kv_lora_rank: int | None = None
    q_lora_rank: int = 0
    rope_head_dim: int | None = None
    nope_head_dim: int | None = None
    v_head_dim: int | None = None
    # --- end of multi-head latent attention. ---------------------------------------------------------------
    # --- Mixture of experts, head_dim, qk_norm and the sliding window (see the class docstring) ---
    n_experts: int = 0
    top_k: int | None = None
    n_shared_experts: int = 0
    d_ff_expert: int | None = None
    first_dense_layers: int = 0
    norm_topk: bool = True
    head_dim: int | None = None
    qk_norm: bool = False
    window: int = 0
    global_every: int = 0
    # T5's parts (positional="relative"): its relative bias's buckets, and scores and embeddings left unscaled.
    relative_buckets: int = 32
    relative_max_distance: int = 128
    scale_scores: bool = True
    scale_embeddings: bool = True

    def __post_init__(self) -> None:
        _check_int("N", self.N, *RANGES["N"])
        _check_int("M", self.M, *RANGES["M"])
        _check_int("E", self.E, *RANGES["E"])
        _check_int("nhead", self.nhead, *RANGES["nhead"])
        if self.head_dim is None and self.E % self.nhead:
            options = ", ".join(str(d) for d in divisors(self.E) if d <= MAX_NHEAD)
            raise ValueError(
                f"nhead={self.nhead} must divide E={self.E} so every head gets d_k = E/nhead "
                f"whole dimensions; try one of {options}, or give head_dim"
            )
        _check_int("vocab_size", self.vocab_size, *RANGES["vocab_size"], "a vocabulary needs at least 2 tokens")
        _check_choice("arch", self.arch, ARCHS)
        if self.arch != "encoder-decoder":
            if self.M_target is not None:
                raise ValueError(f"M_target={self.M_target!r} is given for arch={self.arch!r}, which has one stack "
                                 "and one sequence of M tokens; leave M_target out, or use arch='encoder-decoder'")
        else:
            if self.M_target is None:
                object.__setattr__(self, "M_target", self.M)
            _check_int("M_target", self.M_target, *RANGES["M_target"])
        _check_int("layers", self.layers, *RANGES["layers"])
        if self.d_ff is None:
            object.__setattr__(self, "d_ff", 4 * self.E)
        _check_int("d_ff", self.d_ff, *RANGES["d_ff"])
        _check_choice("positional", self.positional, POSITIONAL_KINDS)
        if self.max_len is None:
            object.__setattr__(self, "max_len", max(self.M, self.M_target or self.M))
        _check_int("max_len", self.max_len, *RANGES["max_len"])
        _check_bool("tie_embeddings", self.tie_embeddings)
        _check_int("seed", self.seed, *RANGES["seed"])
        _check_bool("norm_first", self.norm_first)
        _check_choice("norm", self.norm, NORMS)
        _check_choice("activation", self.activation, ACTIVATIONS)
        _check_bool("bias", self.bias)
        self._check_head_dim()
        self._check_experts()
        self._check_window()
        self._check_heads()
        self._check_latent_attention()
        self._check_relative()
        self._check_attention_map()

    def _check_relative(self) -> None:
        """T5's buckets and scales (core.positions.relative_position_bucket)."""
        _check_int("relative_buckets", self.relative_buckets, *RANGES["relative_buckets"],
                   "two a side at least: one for distance 0, one for all the others")
        _check_int("relative_max_distance", self.relative_max_distance, *RANGES["relative_max_distance"])
        _check_bool("scale_scores", self.scale_scores)
        _check_bool("scale_embeddings", self.scale_embeddings)

    def _check_heads(self) -> None:
        """K/V heads are shared by equal groups of query heads, and RoPE turns d_k's dimensions in pairs."""
        if self.nhead_kv is None:
            object.__setattr__(self, "nhead_kv", self.nhead)
        _check_int("nhead_kv", self.nhead_kv, 1, self.nhead, f"at most nhead={self.nhead}")
        if self.nhead % self.nhead_kv:
            options = ", ".join(str(d) for d in divisors(self.nhead))
            raise ValueError(f"nhead_kv={self.nhead_kv} must divide nhead={self.nhead} so each K/V head serves "
                             f"the same number of query heads; try one of {options}")
        turns_d_k = self.positional == "rope" and self.attention != "mla"  # MLA turns its own rope_head_dim
        if turns_d_k and self.d_k % 2 and self.head_dim != self.E // self.nhead:
            raise ValueError(f"positional='rope' turns pairs of dimensions, so it needs an even d_k; "
                             f"head_dim={self.head_dim} is odd. Try head_dim={self.head_dim + 1}")
        if turns_d_k and self.d_k % 2:
            evens = ", ".join(str(h) for h in divisors(self.E) if (self.E // h) % 2 == 0 and h <= MAX_NHEAD)
            raise ValueError(f"positional='rope' turns pairs of dimensions, so it needs an even d_k; d_k = E/nhead "
                             f"= {self.E}/{self.nhead} = {self.d_k} is odd. Try nhead one of "
                             f"{evens or 'none: E is odd'}, or another positional")

    def _check_latent_attention(self) -> None:
        """Multi-head latent attention: its widths only with attention="mla", where every head gets its own K and V
        back from one latent, turned by RoPE on a separate, even part (DeepSeek-V2, section 2.1)."""
        _check_choice("attention", self.attention, ATTENTIONS)
        if self.attention == "mha":
            for name in MLA_FIELDS:
                value = getattr(self, name)
                if value not in (None, 0) or (name != "q_lora_rank" and value == 0):
                    raise ValueError(f"{name}={value!r} is a width of multi-head latent attention, but "
                                     f"attention='mha'; set attention='mla', or leave {name} out")
            return
        if self.arch == "encoder-decoder":
            raise ValueError("attention='mla' is not built for arch='encoder-decoder' (its cross-attention reads the "
                             "encoder's memory, which a latent would not shrink); use arch='decoder-only', as "
                             "DeepSeek does, or attention='mha'")
        if self.positional != "rope":
            raise ValueError(f"attention='mla' turns its queries and keys with RoPE on their rope_head_dim part, so it "
                             f"needs positional='rope', not positional={self.positional!r}; set positional='rope', or "
                             "use attention='mha'")
        if self.nhead_kv != self.nhead:
            raise ValueError(f"nhead_kv={self.nhead_kv} cannot go with attention='mla': every one of the nhead="
                             f"{self.nhead} heads gets its own K and V back from the shared latent; leave nhead_kv out")
        d_k = self.E // self.nhead
        if self.head_dim != d_k:
            raise ValueError(f"head_dim={self.head_dim} cannot go with attention='mla', whose heads are "
                             "nope_head_dim + rope_head_dim wide (queries, keys) and v_head_dim wide (values); set "
                             "those, and leave head_dim out")
        if self.qk_norm:
            raise ValueError("qk_norm=True cannot go with attention='mla', which normalises its latents instead; "
                             "leave qk_norm out")
        if self.window:
            raise ValueError(f"window={self.window} is not built for attention='mla' here (its cache keeps latents, "
                             "not a rolling buffer of K and V); use window=0, or attention='mha'")
        derived = {"nope_head_dim": d_k, "v_head_dim": d_k, "rope_head_dim": max(2, d_k // 2 // 2 * 2),
                   "kv_lora_rank": 4 * d_k}
        for name in MLA_FIELDS:
            if getattr(self, name) is None:
                object.__setattr__(self, name, derived[name])
            _check_int(name, getattr(self, name), *RANGES[name])
        if self.rope_head_dim % 2:
            raise ValueError(f"rope_head_dim={self.rope_head_dim} is odd: RoPE turns dimensions in pairs; try "
                             f"{self.rope_head_dim - 1} or {self.rope_head_dim + 1}")
    # --- Mixture of experts, head_dim, qk_norm and the sliding window: their checks ---
    def _check_head_dim(self) -> None:
        """d_k is E // nhead unless head_dim says otherwise; qk_norm is a yes or no."""
        if self.head_dim is None:
            object.__setattr__(self, "head_dim", self.E // self.nhead)
        _check_int("head_dim", self.head_dim, *PART_RANGES["head_dim"], "each head's width, d_k")
        _check_bool("qk_norm", self.qk_norm)

    def _check_experts(self) -> None:
        """n_experts = 0 is a dense FFN, and then the other MoE fields must stay unset."""
        _check_int("n_experts", self.n_experts, *PART_RANGES["n_experts"], "0 is a dense FFN")
        if self.n_experts and self.arch == "encoder-decoder":
            raise ValueError(f"n_experts={self.n_experts} is not supported for arch='encoder-decoder' here; "
                             "use arch='decoder-only' or 'encoder-only', or n_experts=0")
        if self.n_experts == 0:
            for name, unset in MOE_UNSET.items():
                if getattr(self, name) != unset:
                    raise ValueError(f"{name}={getattr(self, name)!r} is set but n_experts=0, a dense FFN, has no "
                                     f"experts; set n_experts, or leave {name} out")
            return
        if self.top_k is None:
            object.__setattr__(self, "top_k", min(2, self.n_experts))  # Mixtral's two
        if self.d_ff_expert is None:
            object.__setattr__(self, "d_ff_expert", self.d_ff)
        _check_int("top_k", self.top_k, 1, self.n_experts,
                   f"a token picks at most every one of the n_experts={self.n_experts}; lower top_k or raise n_experts")
        _check_int("n_shared_experts", self.n_shared_experts, *PART_RANGES["n_shared_experts"])
        _check_int("d_ff_expert", self.d_ff_expert, *PART_RANGES["d_ff_expert"])
        _check_int("first_dense_layers", self.first_dense_layers, 0, self.layers - 1,
                   f"at least one of the layers={self.layers} must have experts; lower first_dense_layers "
                   "or raise layers")
        _check_bool("norm_topk", self.norm_topk)

    def _check_window(self) -> None:
        """A window caps how far back a causal query looks; global_every keeps every k-th layer full."""
        _check_int("window", self.window, *PART_RANGES["window"], "0 is full attention")
        _check_int("global_every", self.global_every, *PART_RANGES["global_every"])
        if self.window and self.arch != "decoder-only":
            raise ValueError(f"window={self.window} is for a causal stack; arch={self.arch!r} reads "
                             "every position both ways. Use arch='decoder-only', or window=0")
        if self.global_every and not self.window:
            raise ValueError(f"global_every={self.global_every} says which layers stay full between windowed "
                             "ones, but window=0 leaves every layer full; set window, or leave global_every out")
        if self.global_every == 1:
            raise ValueError("global_every=1 keeps every layer full, so the window would reach no layer; use "
                             "global_every=0 to window every layer, 2 or more to alternate, or window=0")
        if self.global_every > self.layers:
            raise ValueError(f"global_every={self.global_every} is more than layers={self.layers}, so no layer "
                             f"would be full; use at most {self.layers}, or 0 to window every layer")

    @property
    def moe(self) -> bool:
        """True when the FFN is a mixture of experts."""
        return self.n_experts > 0

    def has_experts(self, layer: int) -> bool:
        """Whether layer ``layer`` (from 0) has experts: the first ``first_dense_layers`` keep the dense FFN."""
        return self.moe and layer >= self.first_dense_layers

    def windowed(self, layer: int) -> bool:
        """Whether layer ``layer`` (from 0) attends through the window: all, or all but every k-th (k, 2k, ...)."""
        return windowed(layer, self.window, self.global_every)
    # --- end of the MoE / head_dim / window block ---

    def _check_attention_map(self) -> None:
        """The largest attention map, N x nhead x L x L for the longer sequence, must be a size
        PyTorch can describe; the message says how long that sequence may be at this N and nhead."""
        target = self.M_target or 0
        name, length = ("M", self.M) if self.M >= target else ("M_target", target)
        longest = longest_sequence(self.N, self.nhead)
        if length <= longest:
            return
        numbers = self.N * self.nhead * length * length
        raise ValueError(
            f"N={self.N}, nhead={self.nhead} and {name}={length} make each attention map N × nhead × {name} × "
            f"{name} = {numbers:,} numbers, {numbers * FLOAT32_BYTES:,} bytes: more than PyTorch can size a "
            f"tensor at (under 2^63 bytes), even one it never fills. Lower N, nhead or {name}; at N={self.N} and "
            f"nhead={self.nhead}, {name} can be at most {longest:,}"
        )

    @property
    def d_k(self) -> int:
        """Width of one head's queries, keys and values: head_dim, which is E split evenly over the heads
        unless given."""
        return self.head_dim

    @property
    def qk_head_dim(self) -> int:
        """Multi-head latent attention's query and key width per head: the plain part and the turned part."""
        return (self.nope_head_dim or 0) + (self.rope_head_dim or 0)

    @property
    def d_v(self) -> int:
        """Width of one head's values; equal to d_k here, as in the paper."""
        return self.d_k

    def to_dict(self) -> dict[str, Any]:
        """Plain values, suitable for JSON, URLs and cache keys."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "TransformerConfig":
        """Build from a mapping, ignoring unknown keys (so old links and JSON keep working)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})

    def replace(self, **changes: Any) -> "TransformerConfig":
        """A copy with some fields changed; derived defaults are recomputed when not given."""
        base = self.to_dict()
        # Derived defaults follow their sources unless the caller pins them.
        if ("M" in changes or "arch" in changes) and "M_target" not in changes and self.M_target in (self.M, None):
            base["M_target"] = None
        if "E" in changes and "d_ff" not in changes and self.d_ff == 4 * self.E:
            base["d_ff"] = None
        if "nhead" in changes and "nhead_kv" not in changes and self.nhead_kv == self.nhead:
            base["nhead_kv"] = None
        # --- MoE / head_dim: derived defaults follow their sources; a dense FFN drops the MoE fields ---
        if ("E" in changes or "nhead" in changes) and "head_dim" not in changes and \
                self.head_dim == self.E // self.nhead:
            base["head_dim"] = None
        if changes.get("n_experts", self.n_experts) == 0:
            base.update({k: v for k, v in MOE_UNSET.items() if k not in changes})
        elif "n_experts" in changes and "top_k" not in changes and self.top_k == min(2, self.n_experts):
            base["top_k"] = None
        # A family without the part drops it, and fewer layers carry the layer counts along: global_every past
        # the last layer windows every layer, as 0 does; at least one layer keeps its experts.
        arch = changes.get("arch", self.arch)
        if arch != "decoder-only" and "window" not in changes:
            base.update(window=0, global_every=0)
        if arch == "encoder-decoder" and "n_experts" not in changes:
            base.update({"n_experts": 0} | {k: v for k, v in MOE_UNSET.items() if k not in changes})
        layers = changes.get("layers", self.layers)
        if "layers" in changes and "global_every" not in changes and base["global_every"] > layers:
            base["global_every"] = 0
        if "layers" in changes and "first_dense_layers" not in changes and base["first_dense_layers"] >= layers:
            base["first_dense_layers"] = layers - 1
        if ("d_ff" in changes or base["d_ff"] is None) and "d_ff_expert" not in changes and \
                self.d_ff_expert == self.d_ff:
            base["d_ff_expert"] = None
        if ("M" in changes or "M_target" in changes or "arch" in changes) and "max_len" not in changes:
            if self.max_len == max(self.M, self.M_target or self.M):
                base["max_len"] = None
        # Latent attention's widths follow E, nhead and attention unless pinned; unset, mha wants them left out.
        if {"E", "nhead", "attention"} & changes.keys() and self.attention == "mla":
            derived = TransformerConfig(**{**base, **{n: None for n in MLA_FIELDS}, "q_lora_rank": 0})
            for name in MLA_FIELDS:
                if name not in changes and (changes.get("attention") == "mha" or base[name] == getattr(derived, name)):
                    base[name] = 0 if name == "q_lora_rank" else None
        base.update(changes)
        return TransformerConfig(**base)


# Presets: named configurations a learner can start from.
SEED_NOTE = TransformerConfig(N=2, M=3, E=4, nhead=2, vocab_size=10, layers=1)
"""The first seed note's worked example: E=4, nhead=2, so d_k=2; M=3 as in its "I like apples" (which the
note itself works at d_model=6, two heads of 3)."""

SEED_NOTEBOOK = TransformerConfig(N=5, M=8, E=8, nhead=2, vocab_size=44, layers=1, positional="learned")
"""The notebook's sizes: batch 5, block 8, E=8, a 44-character vocabulary, learned positions."""

PAPER_BASE = TransformerConfig(
    N=1, M=16, E=512, nhead=8, d_ff=2048, layers=6, vocab_size=37000, tie_embeddings=True
)
"""'Attention Is All You Need', base model: 65M parameters in the paper's Table 3, 63.1M here."""

PAPER_BIG = TransformerConfig(
    N=1, M=16, E=1024, nhead=16, d_ff=4096, layers=6, vocab_size=37000, tie_embeddings=True
)
"""The paper's big model: 213M parameters in the paper, 214.3M here (traced shape-only: over the memory
budget)."""

# Real models with their real parts, counted to the parameter (core.memory.param_counts, and the tests
# against Hugging Face's own models). Traced shape-only: each is far over the memory budget.
GPT2_SMALL = TransformerConfig(
    arch="decoder-only", N=1, M=1024, E=768, nhead=12, layers=12, d_ff=3072, vocab_size=50257,
    positional="learned", max_len=1024, activation="gelu", norm_first=True, tie_embeddings=True)
"""GPT-2 small: 124,439,808 parameters."""

LLAMA2_7B = TransformerConfig(
    arch="decoder-only", N=1, M=4096, E=4096, nhead=32, layers=32, d_ff=11008, vocab_size=32000,
    positional="rope", activation="swiglu", norm="rmsnorm", norm_first=True, bias=False)
"""Llama-2-7B: 6,738,415,616 parameters."""

LLAMA2_70B = LLAMA2_7B.replace(E=8192, nhead=64, nhead_kv=8, layers=80, d_ff=28672)
"""Llama-2-70B: grouped-query attention, 8 K/V heads for 64 query heads; 68,976,648,192 parameters."""

LLAMA3_8B = LLAMA2_7B.replace(M=8192, nhead_kv=8, d_ff=14336, vocab_size=128256)
"""Llama-3-8B: 8 K/V heads and a 128,256-token vocabulary; 8,030,261,248 parameters."""

GPT3 = GPT2_SMALL.replace(M=2048, E=12288, nhead=96, layers=96, d_ff=49152, max_len=2048)
"""GPT-3 175B (its dense-attention layout): 174,604,259,328 parameters."""

# --- Mixture-of-experts and sliding-window models ---
MISTRAL_7B = LLAMA2_7B.replace(M=8192, nhead_kv=8, d_ff=14336, window=4096)
"""Mistral-7B (v0.1): Llama-2-7B's shape with 8 K/V heads, d_ff 14336 and a 4096-position window in every
layer; 7,241,732,096 parameters."""

MIXTRAL_8X7B = MISTRAL_7B.replace(M=4096, window=0, n_experts=8, top_k=2)
"""Mixtral-8x7B: Mistral-7B's attention (full, no window) and 8 SwiGLU experts of width 14336 in every layer,
2 per token; 46,702,792,704 parameters, 12,879,925,248 of them active for one token."""

QWEN3_30B_A3B = LLAMA2_7B.replace(
    E=2048, nhead=32, nhead_kv=4, head_dim=128, qk_norm=True, layers=48, d_ff=6144, vocab_size=151936,
    n_experts=128, top_k=8, d_ff_expert=768)
"""Qwen3-30B-A3B: head_dim 128 though E / nhead is 64, RMSNorm on each head's q and k, and 128 experts of
width 768, 8 per token, renormalised; 30,532,122,624 parameters, 3,353,032,704 active."""
# --- end of the MoE / window models ---

# --- DeepSeek: multi-head latent attention and many narrow experts -------------------------------------------
DEEPSEEK_V2_LITE = TransformerConfig(
    arch="decoder-only", N=1, M=4096, E=2048, nhead=16, layers=27, d_ff=10944, vocab_size=102400, positional="rope",
    activation="swiglu", norm="rmsnorm", norm_first=True, bias=False, attention="mla", kv_lora_rank=512,
    q_lora_rank=0, rope_head_dim=64, nope_head_dim=128, v_head_dim=128, n_experts=64, top_k=6, n_shared_experts=2,
    d_ff_expert=1408, first_dense_layers=1, norm_topk=False)
"""DeepSeek-V2-Lite: latent attention with an uncompressed query, a 512-wide latent and a 64-wide rotary key; a
dense first layer, then 64 experts of width 1408, 6 per token, and 2 shared experts; 15,706,484,224 parameters.
Its YaRN rope scaling (longer contexts, a larger softmax scale) changes no shape and no count: not modelled."""

DEEPSEEK_V3 = DEEPSEEK_V2_LITE.replace(
    E=7168, nhead=128, layers=61, d_ff=18432, vocab_size=129280, kv_lora_rank=512, q_lora_rank=1536,
    rope_head_dim=64, nope_head_dim=128, v_head_dim=128, n_experts=256, top_k=8, n_shared_experts=1,
    d_ff_expert=2048, first_dense_layers=3, norm_topk=True)
"""DeepSeek-V3 without its multi-token-prediction module: a 1536-wide compressed query, 3 dense layers, then 256
experts of width 2048, 8 per token, and one shared expert; 671,026,404,352 parameters, 37,552,282,624 active.
Its router scores experts with a sigmoid, adds a per-expert bias (a balancing buffer, not a trained weight, so not
counted) and picks within the best groups of experts; here the router is a softmax and a top-k, which has the
same weights and shapes. The YaRN rope scaling and its softmax factor are not modelled either."""
# --- end of the DeepSeek models ---

REAL_MODELS: dict[str, TransformerConfig] = {
    "GPT-2 small": GPT2_SMALL, "GPT-3 175B": GPT3, "Llama-2-7B": LLAMA2_7B, "Llama-2-70B": LLAMA2_70B,
    "Llama-3-8B": LLAMA3_8B, "Mistral-7B": MISTRAL_7B, "Mixtral-8x7B": MIXTRAL_8X7B, "Qwen3-30B-A3B": QWEN3_30B_A3B,
    "DeepSeek-V2-Lite": DEEPSEEK_V2_LITE, "DeepSeek-V3": DEEPSEEK_V3,
}

# T5 v1.0: relative buckets, pre-norm RMSNorm, no bias, ReLU, one tied embedding and no 1/sqrt(d_k) (its
# initialisation folds it in); counted against Hugging Face's T5ForConditionalGeneration.
T5_SMALL = TransformerConfig(
    N=1, M=512, E=512, nhead=8, layers=6, d_ff=2048, vocab_size=32128, positional="relative", norm="rmsnorm",
    norm_first=True, bias=False, tie_embeddings=True, scale_scores=False, scale_embeddings=False)
"""T5-small: 60,506,624 parameters."""

T5_BASE = T5_SMALL.replace(E=768, nhead=12, layers=12, d_ff=3072)
"""T5-base: 222,903,552 parameters."""

T5_MODELS: dict[str, TransformerConfig] = {"T5-small": T5_SMALL, "T5-base": T5_BASE}

TINY_T5 = T5_SMALL.replace(N=2, M=8, E=16, nhead=2, layers=2, d_ff=32, vocab_size=100, relative_buckets=8,
                           relative_max_distance=16)
"""T5's parts at small sizes, with 8 buckets reaching 16 positions so that some offsets share a bucket at M = 8."""

# The sizes a learner sets, each named with its symbol first: the sidebar's sliders and the quiz's
# evidence tables both say them so, from this one place.
SIZE_LABELS = {
    "N": "N — batch size",
    "M": "M — source length",
    "M_target": "M_target — target length",
    "E": "E — embedding size (d_model)",
    "nhead": "nhead — attention heads",
    "vocab_size": "vocab_size — vocabulary size",
}


def file_name_sizes(cfg: TransformerConfig) -> str:
    """A config's sizes as part of a file name (N2_M8_Mtarget8_E16_...): a download saved for one
    config must not be mistaken for another's."""
    target = "" if cfg.M_target is None else f"_Mtarget{cfg.M_target}"  # a single stack has none
    family = "" if cfg.arch == "encoder-decoder" else f"{cfg.arch}_"
    kv = "" if cfg.nhead_kv == cfg.nhead else f"_kv{cfg.nhead_kv}"
    parts = (f"_hd{cfg.head_dim}" if cfg.head_dim != cfg.E // cfg.nhead else "") + (
        f"_experts{cfg.n_experts}top{cfg.top_k}" if cfg.moe else "") + (f"_window{cfg.window}" if cfg.window else "")
    latent = "" if cfg.attention == "mha" else (f"_mla{cfg.kv_lora_rank}q{cfg.q_lora_rank}r{cfg.rope_head_dim}"
                                               f"n{cfg.nope_head_dim}v{cfg.v_head_dim}")
    return (f"{family}N{cfg.N}_M{cfg.M}{target}_E{cfg.E}_nhead{cfg.nhead}{kv}_vocab{cfg.vocab_size}"
            f"_layers{cfg.layers}_dff{cfg.d_ff}{parts}{latent}")


DEFAULT = TransformerConfig()

# Tiny members of each family, small enough that every value in their tables can be read.
TINY_GPT = TransformerConfig(arch="decoder-only", positional="learned", activation="gelu", norm_first=True,
                             tie_embeddings=True)
"""GPT-2's parts at the default sizes: one stack with the causal mask, pre-norm, GELU, learned positions."""

TINY_BERT = TransformerConfig(arch="encoder-only", positional="learned", activation="gelu")
"""BERT's parts at the default sizes: one stack that reads every position both ways, post-norm, GELU."""

TINY_LLAMA = TransformerConfig(arch="decoder-only", nhead=4, nhead_kv=2, d_ff=48, positional="rope",
                               activation="swiglu", norm="rmsnorm", norm_first=True, bias=False)
"""Llama-2's parts at the default sizes: RMSNorm before each sub-layer, SwiGLU, RoPE, and 2 K/V heads
shared by 4 query heads (d_k = 4, even, as RoPE needs)."""

TINY_MLA = TransformerConfig(arch="decoder-only", nhead=2, d_ff=48, positional="rope", activation="swiglu",
                             norm="rmsnorm", norm_first=True, bias=False, attention="mla", kv_lora_rank=8,
                             q_lora_rank=6, rope_head_dim=4, nope_head_dim=4, v_head_dim=4)
"""DeepSeek's multi-head latent attention at the default sizes, small enough to read every number: each token
caches a latent of 8 and a rotary key of 4 (12 numbers a layer) where its 2 heads' K (8 wide) and V (4) would
take 24."""
TINY_MOE = TINY_LLAMA.replace(n_experts=8, top_k=2, d_ff_expert=8, n_shared_experts=1, first_dense_layers=1,
                              layers=3)
"""A mixture of experts small enough to read: Llama's parts, a dense first layer, then 8 experts of width 8,
2 per token, and one shared expert every token passes through."""

# Each name fits the sidebar's preset box whole (it cannot wrap); the box's help lists every preset's sizes.
PART_PRESETS: dict[str, TransformerConfig] = {"Tiny MoE (8 experts, top 2)": TINY_MOE,
                                              "Tiny MLA (latent attention)": TINY_MLA,
                                              "Tiny T5 (relative positions)": TINY_T5}

PRESETS: dict[str, TransformerConfig] = {
    "Default (M=8, E=16, nhead=2)": DEFAULT,
    "Worked example (M=3, E=4)": SEED_NOTE,
    "Small character model (E=8)": SEED_NOTEBOOK,
    "Tiny GPT (decoder-only)": TINY_GPT,
    "Tiny BERT (encoder-only)": TINY_BERT,
    "Tiny Llama (GQA, RoPE)": TINY_LLAMA,
    **PART_PRESETS,
    "Paper base (E=512, 6+6 layers)": PAPER_BASE,
    "Paper big (E=1024, 6+6 layers)": PAPER_BIG,
    "GPT-2 small": GPT2_SMALL,
    "Llama-2-7B": LLAMA2_7B,
    "Llama-2-70B": LLAMA2_70B,
    "GPT-3": GPT3,
    **T5_MODELS,
    **{name: REAL_MODELS[name] for name in ("Mistral-7B", "Mixtral-8x7B", "Qwen3-30B-A3B", "DeepSeek-V2-Lite",
                                            "DeepSeek-V3")},
}

__all__ = [
    "TransformerConfig", "PRESETS", "DEFAULT", "SEED_NOTE", "SEED_NOTEBOOK", "PAPER_BASE", "PAPER_BIG",
    "TINY_GPT", "TINY_BERT", "TINY_LLAMA", "TINY_MLA", "divisors",
    "POSITIONAL_KINDS",
    "MAX_N", "MAX_M", "MAX_E", "MAX_NHEAD", "MAX_D_FF", "MAX_VOCAB_SIZE", "MAX_LAYERS", "MAX_SEED", "MAX_TENSOR_BYTES",
    "RANGES", "longest_sequence", "ARCHS", "NORMS", "ACTIVATIONS", "ATTENTIONS", "MLA_FIELDS",
    "REAL_MODELS", "GPT2_SMALL", "LLAMA2_7B", "LLAMA2_70B", "LLAMA3_8B", "GPT3",
    "MAX_EXPERTS", "PART_RANGES", "MISTRAL_7B", "MIXTRAL_8X7B", "QWEN3_30B_A3B", "TINY_MOE", "PART_PRESETS",
    "DEEPSEEK_V2_LITE", "DEEPSEEK_V3",
    "T5_SMALL", "T5_BASE", "T5_MODELS", "TINY_T5",
]
