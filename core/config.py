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
# One limit binds the fields together: PyTorch counts a tensor's bytes in a signed 64-bit integer,
# even on the meta device, so an attention map, N x nhead x L x S float32 numbers, must stay under
# 2**63 bytes. The single limits above would allow 2**64 (N=4096, nhead=1024, M=2**20), which PyTorch
# refuses with "Storage size calculation overflowed".
MAX_TENSOR_BYTES = 2**63 - 1
FLOAT32_BYTES = 4

POSITIONAL_KINDS = ("sinusoidal", "learned", "rope", "none", "relative")
ARCHS = ("encoder-decoder", "decoder-only", "encoder-only")
NORMS = ("layernorm", "rmsnorm")
ACTIVATIONS = ("relu", "gelu", "swiglu")

# Each whole-number field's range, lowest and highest allowed, in one place: the config checks against
# it, ``--help`` prints it and the README's table of limits is tested against it.
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
    "relative_buckets": (4, 1024),
    "relative_max_distance": (1, MAX_M),
}


def divisors(n: int) -> list[int]:
    """All positive divisors of n, ascending: the nhead values a given E allows."""
    return [d for d in range(1, n + 1) if n % d == 0] if n > 0 else []


def longest_sequence(N: int, nhead: int) -> int:
    """The longest M (or M_target) whose attention maps PyTorch can size at this N and nhead."""
    return min(MAX_M, math.isqrt(MAX_TENSOR_BYTES // FLOAT32_BYTES // (N * nhead)))


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
    # T5's parts (positional="relative"): the buckets of its relative position bias, scores left without
    # 1/sqrt(d_k), and no sqrt(E) on the embeddings (a tied output layer then reads the decoder output / sqrt(E)).
    relative_buckets: int = 32
    relative_max_distance: int = 128
    scale_scores: bool = True
    scale_embeddings: bool = True

    def __post_init__(self) -> None:
        _check_int("N", self.N, *RANGES["N"])
        _check_int("M", self.M, *RANGES["M"])
        _check_int("E", self.E, *RANGES["E"])
        _check_int("nhead", self.nhead, *RANGES["nhead"])
        if self.E % self.nhead:
            options = ", ".join(str(d) for d in divisors(self.E) if d <= MAX_NHEAD)
            raise ValueError(
                f"nhead={self.nhead} must divide E={self.E} so every head gets d_k = E/nhead "
                f"whole dimensions; try one of {options}"
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
        self._check_heads()
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
        if self.positional == "rope" and self.d_k % 2:
            evens = ", ".join(str(h) for h in divisors(self.E) if (self.E // h) % 2 == 0 and h <= MAX_NHEAD)
            raise ValueError(f"positional='rope' turns pairs of dimensions, so it needs an even d_k; d_k = E/nhead "
                             f"= {self.E}/{self.nhead} = {self.d_k} is odd. Try nhead one of "
                             f"{evens or 'none: E is odd'}, or another positional")

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
        """Width of one head's queries, keys and values: E split evenly over the heads."""
        return self.E // self.nhead

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
        if ("M" in changes or "M_target" in changes or "arch" in changes) and "max_len" not in changes:
            if self.max_len == max(self.M, self.M_target or self.M):
                base["max_len"] = None
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

GPT2_SMALL_SIZES = TransformerConfig(N=8, M=1024, E=768, nhead=12, layers=12, vocab_size=50257, tie_embeddings=True)
"""GPT-2 small's widths (it is decoder-only; here both stacks get 12 layers). Shape-only."""

LLAMA_70B_SIZES = TransformerConfig(
    N=1, M=4096, E=8192, nhead=64, d_ff=28672, layers=80, vocab_size=32000
)
"""Llama-2-70B's widths from the fourth seed note (E=8192, 32000 tokens). Shape-only."""

GPT3_SIZES = TransformerConfig(N=64, M=2048, E=12288, nhead=96, layers=96, vocab_size=50257, tie_embeddings=True)
"""GPT-3 175B's widths (decoder-only in reality). Shape-only: nothing real is allocated."""

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

REAL_MODELS: dict[str, TransformerConfig] = {
    "GPT-2 small": GPT2_SMALL, "GPT-3 175B": GPT3, "Llama-2-7B": LLAMA2_7B, "Llama-2-70B": LLAMA2_70B,
    "Llama-3-8B": LLAMA3_8B,
}

# T5 v1.0 (Raffel et al., 2020), its parts: relative position buckets, pre-norm RMSNorm, no bias anywhere, ReLU,
# one matrix for both embeddings and the output layer, and no 1/sqrt(d_k) (its initialisation folds it in).
# Counted to the parameter against Hugging Face's T5ForConditionalGeneration; traced shape-only.
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
SIZE_NAMES = {
    "N": "N — batch size",
    "M": "M — source length",
    "M_target": "M_target — target length",
    "E": "E — embedding size (d_model)",
    "nhead": "nhead — attention heads",
    "vocab_size": "vocab_size — vocabulary size",
}


def sizes_in_a_name(cfg: TransformerConfig) -> str:
    """A config's sizes as part of a file name (N2_M8_Mtarget8_E16_...): a download saved for one
    config must not be mistaken for another's."""
    target = "" if cfg.M_target is None else f"_Mtarget{cfg.M_target}"  # a single stack has none
    family = "" if cfg.arch == "encoder-decoder" else f"{cfg.arch}_"
    kv = "" if cfg.nhead_kv == cfg.nhead else f"_kv{cfg.nhead_kv}"
    return (f"{family}N{cfg.N}_M{cfg.M}{target}_E{cfg.E}_nhead{cfg.nhead}{kv}_vocab{cfg.vocab_size}"
            f"_layers{cfg.layers}_dff{cfg.d_ff}")


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

# Named for what they are, not for the learners' notes they come from, which the app never shows.
# Each name fits the sidebar's preset box whole (about 190 px of text there, at 1024 and 1280 px
# alike): the box cannot wrap, and "Small character model (N=5, M=8, E=8, vocab 44)" showed its
# first half only. The sidebar's help for the box lists every preset's sizes and parts in full.
# The real models are named plainly; the three "sizes" presets put a real model's widths in the paper's
# encoder-decoder, as the learners' notes did.
PRESETS: dict[str, TransformerConfig] = {
    "Default (M=8, E=16, nhead=2)": DEFAULT,
    "Worked example (M=3, E=4)": SEED_NOTE,
    "Small character model (E=8)": SEED_NOTEBOOK,
    "Tiny GPT (decoder-only)": TINY_GPT,
    "Tiny BERT (encoder-only)": TINY_BERT,
    "Tiny Llama (GQA, RoPE)": TINY_LLAMA,
    "Paper base (E=512, 6+6 layers)": PAPER_BASE,
    "Paper big (E=1024, 6+6 layers)": PAPER_BIG,
    "GPT-2 small sizes (shape only)": GPT2_SMALL_SIZES,
    "Llama-2-70B sizes (shape only)": LLAMA_70B_SIZES,
    "GPT-3 175B sizes (shape only)": GPT3_SIZES,
    "GPT-2 small": GPT2_SMALL,
    "Llama-2-7B": LLAMA2_7B,
    "Llama-2-70B": LLAMA2_70B,
    "GPT-3": GPT3,
}

__all__ = [
    "TransformerConfig", "PRESETS", "DEFAULT", "SEED_NOTE", "SEED_NOTEBOOK", "PAPER_BASE", "PAPER_BIG",
    "GPT2_SMALL_SIZES", "LLAMA_70B_SIZES", "GPT3_SIZES", "TINY_GPT", "TINY_BERT", "TINY_LLAMA", "divisors",
    "POSITIONAL_KINDS",
    "MAX_N", "MAX_M", "MAX_E", "MAX_NHEAD", "MAX_D_FF", "MAX_VOCAB_SIZE", "MAX_LAYERS", "MAX_SEED", "MAX_TENSOR_BYTES",
    "RANGES", "longest_sequence", "ARCHS", "NORMS", "ACTIVATIONS",
    "REAL_MODELS", "GPT2_SMALL", "LLAMA2_7B", "LLAMA2_70B", "LLAMA3_8B", "GPT3",
    "T5_SMALL", "T5_BASE", "T5_MODELS", "TINY_T5",
]
