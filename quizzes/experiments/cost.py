"""What the learner's model costs, from core.cost: FLOPs per token, training compute and memory, the KV cache
at a long context, the decode bound; Korthikanti's activation terms at two contexts; and a mixture of experts'
active against total parameters (Mixtral-8x7B's). Formulas over the config, so any size is fast; a small
config's FLOPs are also counted live by FlopCounterMode on its own pass."""

from __future__ import annotations

from core.config import REAL_MODELS, TransformerConfig
from core.cost import (LIVE_SAVED_BUDGET_BYTES, OPTIMIZERS, CostSettings, cost_report, counted_flops,
                       layer_activation_bytes, pass_flops)
from core.memory import estimate

from .base import Evidence

LONG_CONTEXT, LONG_BATCH = 32_768, 8  # the weights-against-cache questions' context and batch
H100 = "NVIDIA H100 SXM 80GB"
MOE = "Mixtral-8x7B"
# Korthikanti's worked layer (h = 4096, a = 32, s = 4096, b = 1): which term grows with s².
KORTHIKANTI = {"h": 4096, "a": 32, "s": 4096, "b": 1}

COST_LABELS = {
    "active": "your model's active parameters, P_active",
    "total": "your model's parameters, P",
    "flops_per_token": "FLOPs per token, forward (matrix multiplies)",
    "chinchilla_tokens": "compute-optimal tokens, 20 · P_active",
    "training_flops": "training compute at those tokens, 6 · P_active · D",
    "adam_bytes": "bytes a parameter, mixed-precision Adam",
    "adam_total_bytes": "weights, gradients and Adam state, no ZeRO",
    "decode_tokens_s": f"decode bound, batch 1, context M, {H100}, tokens/s",
    "long_weights_bytes": "weights, bf16",
    "long_cache_bytes": f"KV cache at {LONG_CONTEXT:,} tokens × {LONG_BATCH} sequences, bf16",
    "map_growth": "attention map term at 2s ÷ at s",
    "linear_growth": "34·s·b·h term at 2s ÷ at s",
    "flash_bytes": "a layer's activations with FlashAttention",
    "selective_bytes": "a layer's activations with selective recomputation",
    "none_bytes": "a layer's activations with nothing recomputed",
    "moe_active": f"{MOE}'s active parameters",
    "moe_total": f"{MOE}'s parameters",
    "moe_flops_per_token": f"{MOE}'s FLOPs per token",
    "moe_weights_bytes": f"{MOE}'s weights, bf16",
    "counted_flops": "FlopCounterMode's count of one forward pass (small models only)",
    "formula_flops": "our formula for that pass",
}


def _term_growth(recompute: str, flash: bool = False) -> tuple[float, float]:
    k = KORTHIKANTI
    at = lambda s: layer_activation_bytes(s, k["b"], k["h"], k["a"], recompute, flash).value  # noqa: E731
    return at(k["s"]), at(2 * k["s"])


def cost(cfg: TransformerConfig) -> Evidence:
    """The learner's costs, the activation terms, and Mixtral's active and total parameters."""
    r = cost_report(cfg, CostSettings(batch=1, gpu=H100), live=False)
    long = cost_report(cfg, CostSettings(context=LONG_CONTEXT, batch=LONG_BATCH), live=False)
    moe = cost_report(REAL_MODELS[MOE], CostSettings(), live=False)
    none_s, none_2s = _term_growth("none")
    sel_s, sel_2s = _term_growth("selective")
    flash_s, _ = _term_growth("none", flash=True)
    values = {
        "active": r.params.active, "total": r.params.total, "flops_per_token": r.compute["FLOPs per token"].value,
        "chinchilla_tokens": r.compute["compute-optimal tokens"].value,
        "training_flops": r.compute["training compute"].value,
        "adam_bytes": sum(OPTIMIZERS["mixed-precision Adam"]),
        "adam_total_bytes": r.training["weights, gradients, optimizer"].value,
        "decode_tokens_s": r.decode["decode bound"].value,
        "long_weights_bytes": long.inference["weights, bf16"].value,
        "long_cache_bytes": long.inference["KV cache"].value,
        "map_growth": (none_2s - sel_2s) / (none_s - sel_s), "linear_growth": sel_2s / sel_s,
        "flash_bytes": flash_s, "selective_bytes": sel_s, "none_bytes": none_s,
        "moe_active": moe.params.active, "moe_total": moe.params.total,
        "moe_flops_per_token": moe.compute["FLOPs per token"].value,
        "moe_weights_bytes": moe.inference["weights, bf16"].value,
    }
    note = "Formulas from core.cost at your sizes."
    if 3 * estimate(cfg).total <= LIVE_SAVED_BUDGET_BYTES:  # small: count the model's own pass too
        values["counted_flops"] = counted_flops(cfg)
        values["formula_flops"] = pass_flops(cfg).value
        note += " FlopCounterMode counted your model's own forward pass beside the formula."
    records = [{"cost": label, "bytes": values[key]} for key, label in
               (("long_weights_bytes", "weights, bf16"), ("long_cache_bytes", f"KV cache, {LONG_CONTEXT:,} tokens × "
                                                                              f"{LONG_BATCH}"),
                ("adam_total_bytes", "training states, mixed-precision Adam"))]
    return Evidence("cost", "What your model costs, and Mixtral-8x7B's active against total parameters", values,
                    records, {"kind": "bar", "x": "cost", "y": "bytes", "horizontal": "true"}, note,
                    {key: COST_LABELS[key] for key in values})  # a big model's pass is not counted: no name for it
