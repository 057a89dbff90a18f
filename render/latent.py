"""Multi-head latent attention on the Attention page: where one head's K and V came from, in words.

Pure Python (no streamlit, no torch): it reads the config and the shapes a trace recorded (hook name ->
shape tuple), so a shape-only pass says the same as a live one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from render.diagram import shape_text

if TYPE_CHECKING:  # a type only: importing core's package imports torch
    from core.config import TransformerConfig


def _prefix(cfg: TransformerConfig) -> str:
    return ("dec" if cfg.arch == "decoder-only" else "enc") + ".0.self_attn."


def head_note(cfg: TransformerConfig, shapes: dict[str, tuple[int, ...]], head: int) -> str:
    """One line under one head's map: its K and V are not its own, kept, but made back from the latent."""
    p = _prefix(cfg)
    return (f"Head {head}'s K and V were made back from the shared latent c_KV {shape_text(shapes[p + 'latent'])} "
            f"and the rotary key k_rope {shape_text(shapes[p + 'k_rope'])} every head shares: no K or V of its own "
            "was kept. \"K and V from the latent\", below, says how.")


def latent_note(cfg: TransformerConfig, shapes: dict[str, tuple[int, ...]], head: int | None = None) -> str:
    """How ``head``'s (or every head's) K and V were made back from the shared latent, with the live shapes."""
    p = _prefix(cfg)
    whose = f"Head {head}'s" if head is not None else "Each head's"
    heads = "its one head" if cfg.nhead == 1 else f"all {cfg.nhead} heads"
    return (f"{whose} K and V were made back from the shared latent, not kept per head. Each position is squeezed "
            f"to one latent c_KV {shape_text(shapes[p + 'latent'])}, (N, M, kv_lora_rank), and one rotary key "
            f"k_rope {shape_text(shapes[p + 'k_rope'])}, (N, M, rope_head_dim): the two things the cache keeps, "
            f"{cfg.kv_lora_rank} + {cfg.rope_head_dim} = {cfg.kv_lora_rank + cfg.rope_head_dim} numbers a token and "
            f"layer. W_UKV makes every head's K part without positions (nope_head_dim = {cfg.nope_head_dim}) and its "
            f"V (v_head_dim = {cfg.v_head_dim}) from the latent; k_rope, turned by RoPE, is joined to every head's "
            f"key, the same for {heads}. So K is {shape_text(shapes[p + 'k'])} and V "
            f"{shape_text(shapes[p + 'v'])}, (N, nhead, M, d): the heads' maps differ through their own slices of "
            f"W_UKV and their own queries, and the scores are scaled by 1/√(nope_head_dim + rope_head_dim) = "
            f"1/√{cfg.qk_head_dim}.")
