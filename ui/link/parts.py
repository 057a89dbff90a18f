"""The new parts' fields in a link: mixture of experts, latent attention, head_dim and qk_norm, the sliding window
and T5's relative positions. Read onto the sliders' steps after the sizes and the family are (ui/link/config.py),
so that every value they leave is valid with those; written back only where they differ from what the config
makes of them when left out, so that a link without these parts stays as short as before.

No Streamlit here. A link is untrusted text: nothing here raises on it.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Callable

from core import TransformerConfig
from core.config import ATTENTIONS, MLA_FIELDS
from ui.link.choices import warning_quote

# The part fields, in the order a link writes them.
MOE_FIELDS = ("n_experts", "top_k", "n_shared_experts", "d_ff_expert", "first_dense_layers", "norm_topk")
MHA_FIELDS = ("head_dim", "qk_norm")
WINDOW_FIELDS = ("window", "global_every")
T5_FIELDS = ("relative_buckets", "relative_max_distance", "scale_scores", "scale_embeddings")
PART_FIELDS = (*MOE_FIELDS, "attention", *MLA_FIELDS, *MHA_FIELDS, *WINDOW_FIELDS, *T5_FIELDS)
PART_BOOLS = ("norm_topk", "qk_norm", "scale_scores", "scale_embeddings")
# The fields the config works out from others when left out: a link or the sidebar leaves them unset while
# they equal that, so that they follow E, nhead, d_ff and n_experts.
FOLLOWERS = ("top_k", "d_ff_expert", "head_dim", "kv_lora_rank", "rope_head_dim", "nope_head_dim", "v_head_dim")
UNSET = {f.name: f.default for f in fields(TransformerConfig) if f.name in PART_FIELDS}

EXPERT_COUNTS = list(range(0, 65)) + [96, 128, 160, 256]  # 0: a dense FFN
SHARED_RANGE = (0, 8)
BUCKET_RANGE = (4, 128)


def unset_followers(cfg: TransformerConfig) -> TransformerConfig | None:
    """``cfg`` with every follower left to the config, or None where that is no valid config."""
    try:
        return TransformerConfig(**cfg.to_dict() | {name: None for name in FOLLOWERS})
    except ValueError:
        return None


def pinned(cfg: TransformerConfig) -> set[str]:
    """The followers that ``cfg`` sets apart from what the config would make of them (Qwen3's head_dim = 128)."""
    plain = unset_followers(cfg)
    return {name for name in FOLLOWERS if plain is None or getattr(plain, name) != getattr(cfg, name)}


def part_link_values(cfg: TransformerConfig) -> dict[str, Any]:
    """The part fields a link must carry to reproduce ``cfg``: those not at their default, followers set apart."""
    kept = pinned(cfg)
    return {name: getattr(cfg, name) for name in PART_FIELDS
            if getattr(cfg, name) is not None
            and (name in kept if name in FOLLOWERS else getattr(cfg, name) != UNSET[name])}


def read_parts(values: dict[str, Any], out: dict[str, Any], warnings: list[str], *, lengths: list[int],
               widths: list[int], ffs: list[int], choose: Callable, word: Callable, flag: Callable) -> None:
    """Read the part fields of ``values`` into ``out``, which holds the sizes, the family and the other parts
    already read. A part the family or the sizes do not allow is left out with a sentence in ``warnings``;
    ``choose``, ``word`` and ``flag`` are snap_config's readers (they warn about values off the sliders)."""
    def given(name: str) -> bool:
        return values.get(name) is not None and str(values[name]).strip() != ""

    def drop(names: tuple[str, ...], why: str) -> None:
        """Leave ``names`` out, with one sentence for those the link gave (head_dim = E/nhead is no setting apart)."""
        unset = UNSET | {"head_dim": d_k}
        said = [f"{name}={warning_quote(values[name])}" for name in names
                if given(name) and str(values[name]).strip().lower() != str(unset[name]).lower()]
        if said:
            warnings.append(f"{', '.join(said)} {'is' if len(said) == 1 else 'are'} left out: {why}.")

    arch, layers = out["arch"], out["layers"]
    d_k = out["E"] // out["nhead"]
    # Mixture of experts: any family but the encoder-decoder.
    experts = choose("n_experts", EXPERT_COUNTS, 0)
    forced = experts and arch == "encoder-decoder"  # one sentence says it for every expert field
    if forced:
        warnings.append(f"n_experts={experts} is not built for arch=encoder-decoder; using n_experts=0, a dense FFN.")
        experts = 0
    out["n_experts"] = experts
    if experts:
        out["top_k"] = choose("top_k", (1, experts), min(2, experts), using=min(2, experts))
        out["n_shared_experts"] = choose("n_shared_experts", SHARED_RANGE, 0)
        out["d_ff_expert"] = choose("d_ff_expert", ffs, out["d_ff"], using=f"d_ff_expert = d_ff = {out['d_ff']}")
        out["first_dense_layers"] = choose("first_dense_layers", (0, layers - 1), 0)
        out["norm_topk"] = flag("norm_topk")
    elif not forced:
        drop(MOE_FIELDS[1:], "n_experts=0 is a dense FFN, with no experts")
    # Attention: multi-head latent attention needs one stack, RoPE and a K/V head per query head.
    attention = word("attention", ATTENTIONS, "mha")
    if attention == "mla":
        why = ("arch=encoder-decoder" if arch == "encoder-decoder" else
               f"positional={out['positional']}, where MLA turns its keys with RoPE" if out["positional"] != "rope"
               else f"nhead_kv={out['nhead_kv']}, where every MLA head has its own K and V"
               if out["nhead_kv"] != out["nhead"] else "")
        if why:
            warnings.append(f"attention=mla is not built with {why}; using attention=mha.")
            attention = "mha"
    out["attention"] = attention
    if attention == "mla":
        out["kv_lora_rank"] = choose("kv_lora_rank", widths, 4 * d_k, using=f"4 d_k = {4 * d_k}")
        out["q_lora_rank"] = choose("q_lora_rank", [0, *widths], 0)
        rope = max(2, d_k // 2 // 2 * 2)
        out["rope_head_dim"] = choose("rope_head_dim", [w for w in widths if w % 2 == 0], rope, using=rope)
        out["nope_head_dim"] = choose("nope_head_dim", widths, d_k, using=f"d_k = {d_k}")
        out["v_head_dim"] = choose("v_head_dim", widths, d_k, using=f"d_k = {d_k}")
        drop((*MHA_FIELDS, *WINDOW_FIELDS), "attention=mla sets its own head widths, normalises its latents and "
                                            "keeps no window")
    else:
        drop(MLA_FIELDS, "they are widths of attention=mla")
        head_dim = choose("head_dim", widths, d_k, using=f"E/nhead = {d_k}")
        if out["positional"] == "rope" and head_dim % 2 and head_dim != d_k:
            warnings.append(f"head_dim={head_dim} is odd, and positional=rope turns pairs of dimensions; using "
                            f"head_dim = E/nhead = {d_k}.")
            head_dim = d_k
        if out["positional"] == "rope" and head_dim % 2:  # only where attention=mla was asked for and left out
            warnings.append(f"positional=rope turns pairs of dimensions, so it needs an even d_k; d_k = E/nhead = "
                            f"{out['E']}/{out['nhead']} = {d_k} is odd, so using sinusoidal.")
            out["positional"] = "sinusoidal"
        out["head_dim"] = head_dim
        out["qk_norm"] = flag("qk_norm")
        window = choose("window", [0, *lengths], 0) if arch == "decoder-only" else 0
        if not window:
            drop(WINDOW_FIELDS, "a window is for arch=decoder-only" if arch != "decoder-only" else
                 "window=0 is full attention in every layer")
        else:
            out["window"] = window
            every = choose("global_every", (0, layers), 0)
            if every == 1:
                every = 2 if layers >= 2 else 0
                warnings.append(f"global_every=1 would keep every layer full; using global_every={every}.")
            out["global_every"] = every
    # T5's buckets and scales: read for any positions (the sidebar shows the buckets with relative ones only).
    out["relative_buckets"] = choose("relative_buckets", BUCKET_RANGE, UNSET["relative_buckets"])
    out["relative_max_distance"] = choose("relative_max_distance", lengths, UNSET["relative_max_distance"])
    out["scale_scores"] = flag("scale_scores")
    out["scale_embeddings"] = flag("scale_embeddings")
