"""Where a model's parameters sit, by part (attention, experts, shared experts, router, embeddings, norms...), with
the ones one token's pass touches, and a real model's published counts to hold them against.

Pure arithmetic on the config (core.memory's counts): no model is built, so DeepSeek-V3 costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import T5_MODELS, TransformerConfig
from .memory import PUBLISHED_PARAMS, active_params, ffn_params, moe_layers, param_counts, real_model

# The parts in the order a token meets them; a component of core.memory.param_counts goes to the first whose
# test it passes.
PARTS = ("embeddings", "attention", "FFN", "experts", "shared experts", "router", "norms", "output layer")

# T5's published counts (Hugging Face's T5ForConditionalGeneration, as core.config's T5 docstrings say), beside
# core.memory.PUBLISHED_PARAMS for the decoder-only real models.
PUBLISHED_T5: dict[str, tuple[int, str]] = {"T5-small": (60_506_624, "60M"), "T5-base": (222_903_552, "220M")}

# Active parameters as each model's announcement gives them: rounded, so the count is held against the figure to
# within one unit of its last digit (the announcements round some figures up and cut others short).
PUBLISHED_ACTIVE: dict[str, str] = {"Mixtral-8x7B": "12.9B", "Qwen3-30B-A3B": "3.3B", "DeepSeek-V2-Lite": "2.4B",
                                    "DeepSeek-V3": "37B"}


def part_of(component: str) -> str:
    """The part a component of ``param_counts`` belongs to: 'encoder self-attention' -> 'attention'."""
    if component in ("token embeddings", "positional table"):
        return "embeddings"
    if "attention" in component:  # self-, cross- and latent attention's pieces
        return "attention"
    if component.endswith("FFN"):
        return "FFN"
    if component.endswith(("norms", "LayerNorms")):
        return "norms"
    if component in PARTS:
        return component
    raise KeyError(f"component {component!r} belongs to none of {', '.join(PARTS)}")


@dataclass(frozen=True)
class ParamPart:
    """One part's parameters in the whole model, and the ones one token's pass touches."""

    name: str
    total: int
    active: int


def expert_params(cfg: TransformerConfig) -> int:
    """One routed expert's parameters: an FFN of width d_ff_expert."""
    return ffn_params(cfg.E, cfg.d_ff_expert, cfg.activation == "swiglu", cfg.bias)


def param_parts(cfg: TransformerConfig) -> list[ParamPart]:
    """Every part that holds parameters, in PARTS' order. A token runs top_k of the n_experts routed experts in
    each layer with experts, so only their active share differs from their total; a dense model's parts are all
    active."""
    totals: dict[str, int] = {}
    for component, n in param_counts(cfg).items():
        if component != "total" and n:
            totals[part_of(component)] = totals.get(part_of(component), 0) + n
    active = {"experts": moe_layers(cfg) * cfg.top_k * expert_params(cfg)} if cfg.moe else {}
    return [ParamPart(name, totals[name], active.get(name, totals[name])) for name in PARTS if name in totals]


def published_name(cfg: TransformerConfig) -> str | None:
    """The real model (core.config.REAL_MODELS or T5_MODELS) whose parts and widths this config has, if any."""
    name = real_model(cfg)
    if name is not None:
        return name
    counted = ("E", "nhead", "layers", "d_ff", "vocab_size", "positional", "relative_buckets", "tie_embeddings",
               "norm", "norm_first", "activation", "bias", "arch", "nhead_kv", "head_dim", "n_experts")
    return next((name for name, t5 in T5_MODELS.items() if all(getattr(cfg, f) == getattr(t5, f) for f in counted)),
                None)


@dataclass(frozen=True)
class PublishedCheck:
    """A real model's counts against its published ones: the total exact, the active count as rounded."""

    model: str
    total: int  # counted here
    published: int
    named: str  # as the card names it: "8x7B"
    active: int | None = None  # counted here, for a mixture of experts
    published_active: str | None = None  # "12.9B", when the model's announcement gives one
    embeddings: int = 0  # the token embedding table, which a figure of active parameters may leave out

    @property
    def total_matches(self) -> bool:
        return self.total == self.published

    @property
    def active_agrees(self) -> bool | None:
        """Whether the active count is the published figure to its last digit (None when there is none)."""
        if self.active is None or self.published_active is None:
            return None
        return near(self.active, self.published_active)

    @property
    def agrees_without_embeddings(self) -> bool | None:
        """Whether the active count less the token embeddings (a lookup, no multiplication) is the figure."""
        if self.active is None or self.published_active is None:
            return None
        return near(self.active - self.embeddings, self.published_active)


def near(count: int, figure: str) -> bool:
    """Whether ``count`` is ``figure`` ('12.9B', '37B', '60M') to the figure's last digit: within one unit of it.
    12,879,925,248 is 12.9B and 37,552,282,624 is 37B; 2,661,150,208 is not 2.4B."""
    scale = {"B": 10**9, "M": 10**6}[figure[-1]]
    digits = figure[:-1]
    unit = 10.0 ** -(len(digits.split(".")[1]) if "." in digits else 0)
    return abs(count / scale - float(digits)) < unit


def published_check(cfg: TransformerConfig) -> PublishedCheck | None:
    """The config's counts against the published ones, when it is a real model."""
    name = published_name(cfg)
    if name is None:
        return None
    published, named = {**PUBLISHED_PARAMS, **PUBLISHED_T5}[name]
    counts = param_counts(cfg)
    return PublishedCheck(name, counts["total"], published, named, active_params(cfg) if cfg.moe else None,
                          PUBLISHED_ACTIVE.get(name) if cfg.moe else None, counts["token embeddings"])
