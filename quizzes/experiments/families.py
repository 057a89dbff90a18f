"""The families side by side: which parts each one keeps, what a one-stack model reads, and the counts of the
later parts (GQA, SwiGLU, the norms) at the learner's own sizes, on the meta device."""

from __future__ import annotations

import torch
from torch import nn

from core.config import ARCHS, LLAMA2_7B, LLAMA2_70B, TransformerConfig
from core.model import (DecoderLayer, FeedForward, MultiHeadAttention, Transformer,
                        generate_square_subsequent_mask)
from .base import Evidence, bounded, generator, in_family


def _count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def _norms(model: nn.Module) -> int:
    return sum(isinstance(m, (nn.LayerNorm, nn.RMSNorm)) for m in model.modules())


FAMILY_PARTS_LABELS = {
    "arch": "your family",
    "self_attention_blocks": "self-attention blocks in your model",
    "cross_attention_blocks": "cross-attention blocks in your model",
    "attention_blocks": "attention blocks in your model, of every kind",
    "ffn_blocks": "FFN blocks in your model",
    "norms": "norms in your model (LayerNorm or RMSNorm)",
    "has_target": "your model reads a second sequence, M_target long",
    "total": "parameters of your model",
    "paper_total": "parameters of an encoder-decoder with your sizes and parts",
    "fewer_than_paper": "how many fewer parameters yours has than that",
}


def family_parts(cfg: TransformerConfig) -> Evidence:
    """The three families at the learner's sizes and parts, built on the meta device, their blocks counted."""
    records, counts = [], {}
    for arch in ARCHS:
        model = Transformer.from_config(in_family(cfg, arch), device="meta")
        cross = sum(isinstance(m, DecoderLayer) and m.cross_attn is not None for m in model.modules())
        attention = sum(isinstance(m, MultiHeadAttention) for m in model.modules())
        counts[arch] = {"self": attention - cross, "cross": cross, "attention": attention, "norms": _norms(model),
                        "ffn": sum(isinstance(m, FeedForward) for m in model.modules()), "total": _count(model)}
        records += [{"family": arch, "part": part, "blocks": counts[arch][key]}
                    for part, key in (("self-attention", "self"), ("cross-attention", "cross"), ("FFN", "ffn"),
                                      ("norms", "norms"))]
    mine = counts[cfg.arch]
    values = {"arch": cfg.arch, "self_attention_blocks": mine["self"], "cross_attention_blocks": mine["cross"],
              "attention_blocks": mine["attention"], "ffn_blocks": mine["ffn"], "norms": mine["norms"],
              "has_target": cfg.M_target is not None, "total": mine["total"],
              "paper_total": counts["encoder-decoder"]["total"],
              "fewer_than_paper": counts["encoder-decoder"]["total"] - mine["total"]}
    return Evidence("family_parts", f"Blocks of each family at your sizes (layers={cfg.layers})", values, records,
                    {"kind": "bar", "x": "family", "y": "blocks", "color": "part"},
                    "Each family built on the meta device with your sizes and parts: shapes only, nothing allocated.",
                    FAMILY_PARTS_LABELS)


FAMILY_REACH_LABELS = {
    "arch": "the family probed",
    "positions": "positions in the probe",
    "changed_position": "the input token changed (its position)",
    "earlier_moved": "logits before that position moved",
    "later_moved": "logits after that position moved",
    "positions_moved": "positions whose logits moved",
}


def family_reach(cfg: TransformerConfig) -> Evidence:
    """Change one token of a one-stack model's input and see which positions' logits move: under the causal
    mask (decoder-only) only that position and later ones, without it (encoder-only) every one. An
    encoder-decoder config is probed as decoder-only, the stack the one-stack questions ask about."""
    arch = cfg.arch if cfg.arch != "encoder-decoder" else "decoder-only"
    small, note = bounded(in_family(cfg, arch), uses=("M", "E", "nhead", "d_ff", "layers", "vocab_size"))
    L = max(small.M, 4)  # a middle position with neighbours on both sides
    small = small.replace(M=L, max_len=max(small.max_len, L), N=1)
    model = Transformer.from_config(small).train(False)
    tokens = torch.randint(0, small.vocab_size, (1, L), generator=generator(small.seed))  # (1, L)
    changed = tokens.clone()
    j = L // 2
    changed[0, j] = (changed[0, j] + 1) % small.vocab_size
    with torch.no_grad():
        if arch == "decoder-only":
            mask = generate_square_subsequent_mask(L)  # (L, L)
            before, after = model(None, tokens, tgt_mask=mask), model(None, changed, tgt_mask=mask)  # (1, L, vocab)
        else:
            before, after = model(tokens), model(changed)  # (1, L, vocab_size)
    change = (before - after).abs().amax(dim=(0, 2))  # (L,): the most any logit of each position moved
    moved = change > 0  # (L,)
    values = {"arch": arch, "positions": L, "changed_position": j, "earlier_moved": bool(moved[:j].any()),
              "later_moved": bool(moved[j + 1:].any()), "positions_moved": int(moved.sum())}
    records = [{"position": i, "largest change of a logit": c} for i, c in enumerate(change.tolist())]
    if L != cfg.M:
        note = " ".join(n for n in (note, f"Probed over {L} positions.") if n)
    return Evidence("family_reach", f"Which positions' logits move when token {j} changes ({arch})", values, records,
                    {"kind": "bar", "x": "position", "y": "largest change of a logit"}, note, FAMILY_REACH_LABELS)


PART_COUNTS_LABELS = {
    "attention_block": "one attention block at your E, nhead_kv and bias",
    "mha_block": "the same block with nhead_kv = nhead (multi-head)",
    "saved_by_shared_kv": "what sharing K/V heads saves in one block",
    "swiglu_ffn": "one SwiGLU FFN at your E, d_ff and bias",
    "swiglu_matrices": "weight matrices in one SwiGLU FFN",
    "relu_ffn": "one ReLU or GELU FFN at your E, d_ff and bias",
    "layernorm": "one LayerNorm over E, gain and bias",
    "rmsnorm": "one RMSNorm over E",
    "llama_qkv": "Llama-2-70B: W^Q, W^K, W^V of one layer (8 K/V heads)",
    "llama_qkv_mha": "the same with 64 K/V heads, as the seed note counted",
    "llama_total": "Llama-2-70B, the whole model",
    "llama7b_ffn": "Llama-2-7B: one SwiGLU FFN",
}


def part_counts(cfg: TransformerConfig) -> Evidence:
    """Parameters of the later parts at the learner's sizes, and of two real models, counted on modules built
    on the meta device."""
    E, bias = cfg.E, cfg.bias
    attention = _count(MultiHeadAttention(E, cfg.nhead, "meta", nhead_kv=cfg.nhead_kv, bias=bias))
    mha = _count(MultiHeadAttention(E, cfg.nhead, "meta", bias=bias))
    swiglu = FeedForward(E, cfg.d_ff, "meta", activation="swiglu", bias=bias)
    llama = MultiHeadAttention(LLAMA2_70B.E, LLAMA2_70B.nhead, "meta", nhead_kv=LLAMA2_70B.nhead_kv, bias=False)
    llama_mha = MultiHeadAttention(LLAMA2_70B.E, LLAMA2_70B.nhead, "meta", bias=False)
    values = {
        "attention_block": attention, "mha_block": mha, "saved_by_shared_kv": mha - attention,
        "swiglu_ffn": _count(swiglu), "swiglu_matrices": sum(isinstance(m, nn.Linear) for m in swiglu.modules()),
        "relu_ffn": _count(FeedForward(E, cfg.d_ff, "meta", bias=bias)),
        "layernorm": _count(nn.LayerNorm(E, device="meta")), "rmsnorm": _count(nn.RMSNorm(E, device="meta")),
        "llama_qkv": sum(W.weight.numel() for W in (llama.W_q, llama.W_k, llama.W_v)),
        "llama_qkv_mha": sum(W.weight.numel() for W in (llama_mha.W_q, llama_mha.W_k, llama_mha.W_v)),
        "llama_total": _count(Transformer.from_config(LLAMA2_70B, device="meta")),
        "llama7b_ffn": _count(FeedForward(LLAMA2_7B.E, LLAMA2_7B.d_ff, "meta", activation="swiglu", bias=False)),
    }
    records = [{"what": PART_COUNTS_LABELS[k], "parameters": values[k]}
               for k in ("attention_block", "mha_block", "swiglu_ffn", "relu_ffn", "layernorm", "rmsnorm",
                         "llama_qkv", "llama_qkv_mha", "llama7b_ffn", "llama_total")]
    return Evidence("part_counts", "Parameters of the later parts, counted on the meta device", values, records,
                    {"kind": "bar", "x": "what", "y": "parameters", "log_y": "true", "horizontal": "true"},
                    "Counted on modules built on the meta device: shapes only, nothing allocated.",
                    PART_COUNTS_LABELS)
