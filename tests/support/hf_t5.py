"""Hugging Face's T5ForConditionalGeneration holding a T5 Transformer's weights (relative position bias in each
stack's first layer, pre-norm RMSNorm, no bias, one shared embedding). Dev-only: transformers."""

import torch
import transformers

from core import Transformer, TransformerConfig


def hf_config(cfg: TransformerConfig, **generation) -> transformers.T5Config:
    """HF's T5 of this config's sizes; its RMSNorm's epsilon set to ours (nn.RMSNorm's 1e-5, T5's 1e-6)."""
    return transformers.T5Config(
        vocab_size=cfg.vocab_size, d_model=cfg.E, d_kv=cfg.d_k, d_ff=cfg.d_ff, num_layers=cfg.layers,
        num_heads=cfg.nhead, relative_attention_num_buckets=cfg.relative_buckets,
        relative_attention_max_distance=cfg.relative_max_distance, dropout_rate=0.0, layer_norm_epsilon=1e-5,
        feed_forward_proj="relu", tie_word_embeddings=cfg.tie_embeddings, attn_implementation="eager", **generation)


@torch.no_grad()
def t5_from(ours: Transformer, cfg: TransformerConfig, **generation) -> transformers.T5ForConditionalGeneration:
    """HF's T5 of ``cfg``'s sizes holding ``ours``' weights."""
    hf = transformers.T5ForConditionalGeneration(hf_config(cfg, **generation)).eval()
    copy_into_hf(ours, hf)
    return hf


@torch.no_grad()
def copy_into_hf(ours: Transformer, hf: transformers.T5ForConditionalGeneration) -> None:
    """Every weight of ``ours`` into the HF model of the same sizes."""
    hf.shared.weight.copy_(ours.src_embed.lookup.weight)
    for side, stack in (("encoder", ours.encoder), ("decoder", ours.decoder)):
        hf_stack = getattr(hf, side)
        for block, layer in zip(hf_stack.block, stack):
            attns = [(block.layer[0].SelfAttention, layer.self_attn, layer.norm1)]
            if side == "decoder":
                attns.append((block.layer[1].EncDecAttention, layer.cross_attn, layer.norm2))
            for i, (theirs, mine, norm) in enumerate(attns):
                for a, b in (("q", "W_q"), ("k", "W_k"), ("v", "W_v"), ("o", "W_o")):
                    getattr(theirs, a).weight.copy_(getattr(mine, b).weight)
                block.layer[i].layer_norm.weight.copy_(norm.weight)
            ff = block.layer[-1]
            ff.DenseReluDense.wi.weight.copy_(layer.ffn.linear1.weight)
            ff.DenseReluDense.wo.weight.copy_(layer.ffn.linear2.weight)
            ff.layer_norm.weight.copy_((layer.norm3 if side == "decoder" else layer.norm2).weight)
        hf_stack.block[0].layer[0].SelfAttention.relative_attention_bias.weight.copy_(stack[0].relative.table.weight)
        hf_stack.final_layer_norm.weight.copy_(getattr(ours, f"{side}_norm").weight)
