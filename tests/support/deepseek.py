"""Hugging Face's DeepSeek-V2 built from one of our configs, and our weights copied into it (dev-only: transformers)."""

from __future__ import annotations

import torch
import transformers

from core import Transformer, TransformerConfig


def deepseek_v2_config(cfg: TransformerConfig, **extra) -> transformers.DeepseekV2Config:
    """The HF config of a decoder-only MLA model with our widths; every layer's FFN dense unless ``extra`` says
    otherwise. No rope scaling, eager attention, RMSNorm's eps as ours (1e-5; the latents' 1e-6 on both sides)."""
    values = dict(
        vocab_size=cfg.vocab_size, hidden_size=cfg.E, intermediate_size=cfg.d_ff, num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.nhead, num_key_value_heads=cfg.nhead, max_position_embeddings=max(cfg.max_len, 64),
        rms_norm_eps=1e-5, attention_bias=cfg.bias, mlp_bias=cfg.bias, tie_word_embeddings=cfg.tie_embeddings,
        kv_lora_rank=cfg.kv_lora_rank, q_lora_rank=cfg.q_lora_rank or None, qk_rope_head_dim=cfg.rope_head_dim,
        qk_nope_head_dim=cfg.nope_head_dim, v_head_dim=cfg.v_head_dim,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        first_k_dense_replace=cfg.layers, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=8,
        n_shared_experts=1, attn_implementation="eager",
    )
    values.update(extra)
    return transformers.DeepseekV2Config(**values)


@torch.no_grad()
def copy_attention(ours, hf_attn) -> None:
    """Our LatentAttention's weights into HF's DeepseekV2Attention, name by name."""
    pairs = [("W_dkv", "kv_a_proj_with_mqa"), ("kv_norm", "kv_a_layernorm"), ("W_ukv", "kv_b_proj"), ("W_o", "o_proj")]
    pairs += [("W_q", "q_proj")] if ours.W_q is not None else [("W_dq", "q_a_proj"), ("q_norm", "q_a_layernorm"),
                                                               ("W_uq", "q_b_proj")]
    for mine, theirs in pairs:
        getattr(hf_attn, theirs).load_state_dict(getattr(ours, mine).state_dict())


@torch.no_grad()
def copy_ffn(ours, hf_mlp) -> None:
    """Our SwiGLU FeedForward into HF's gate_proj / up_proj / down_proj."""
    hf_mlp.gate_proj.load_state_dict(ours.linear1.state_dict())
    hf_mlp.up_proj.load_state_dict(ours.linear3.state_dict())
    hf_mlp.down_proj.load_state_dict(ours.linear2.state_dict())


@torch.no_grad()
def copy_experts(ours, hf_moe) -> None:
    """Our Experts (core.experts) into HF's DeepseekV2Moe: the router, every expert's three matrices stacked as HF
    keeps them (gate and up side by side in gate_up_proj), and the shared experts as one FFN."""
    hf_moe.gate.weight.copy_(ours.router.weight)
    experts = ours.experts
    hf_moe.experts.gate_up_proj.copy_(torch.cat((experts.W_gate, experts.W_up), dim=1))  # (n_experts, 2 d, E)
    hf_moe.experts.down_proj.copy_(experts.W_down)  # (n_experts, E, d)
    copy_ffn(ours.shared, hf_moe.shared_experts)


@torch.no_grad()
def copy_dense_model(ours: Transformer, hf) -> None:
    """Embeddings, norms, attention and dense SwiGLU FFNs of every layer, the final norm and the output layer."""
    hf.model.embed_tokens.weight.copy_(ours.tgt_embed.lookup.weight)
    for layer, block in zip(ours.decoder, hf.model.layers):
        copy_attention(layer.self_attn, block.self_attn)
        block.input_layernorm.weight.copy_(layer.norm1.weight)
        block.post_attention_layernorm.weight.copy_(layer.norm3.weight)
        if hasattr(block.mlp, "gate_proj"):
            copy_ffn(layer.ffn, block.mlp)
        else:
            copy_experts(layer.ffn, block.mlp)
    hf.model.norm.weight.copy_(ours.decoder_norm.weight)
    if hf.lm_head.weight is not hf.model.embed_tokens.weight:
        hf.lm_head.load_state_dict(ours.generator.state_dict())


@torch.no_grad()
def shake_norms(model: torch.nn.Module, seed: int = 7) -> None:
    """Every RMSNorm's gain away from 1, so a norm copied to the wrong place would show in the logits."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, torch.nn.RMSNorm):
            m.weight.copy_(1 + 0.5 * torch.rand(m.weight.shape, generator=g))
