"""Hugging Face's GPT2LMHeadModel holding a decoder-only Transformer's weights (GPT-2's parts: pre-norm
LayerNorm, learned positions, GELU, a tied output layer without bias). Dev-only: transformers."""

import torch
import transformers

from core import Transformer, TransformerConfig


@torch.no_grad()
def gpt2_from(ours: Transformer, cfg: TransformerConfig, eos: int | None = None):
    """The HF model with our weights copied in; GPT-2's Conv1D layers hold the transposed matrices."""
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_embd=cfg.E, n_layer=cfg.layers, n_head=cfg.nhead, n_positions=cfg.max_len, vocab_size=cfg.vocab_size,
        n_inner=cfg.d_ff, activation_function="gelu", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        bos_token_id=eos, eos_token_id=eos, pad_token_id=eos)).eval()
    g = hf.transformer
    g.wte.weight.copy_(ours.src_embed.lookup.weight)
    g.wpe.weight.copy_(ours.positional.table)
    for block, layer in zip(g.h, ours.decoder):
        a = layer.self_attn
        block.attn.c_attn.weight.copy_(torch.cat([a.W_q.weight, a.W_k.weight, a.W_v.weight]).T)  # Conv1D: (E, 3E)
        block.attn.c_attn.bias.copy_(torch.cat([a.W_q.bias, a.W_k.bias, a.W_v.bias]))
        block.attn.c_proj.weight.copy_(a.W_o.weight.T)
        block.attn.c_proj.bias.copy_(a.W_o.bias)
        block.mlp.c_fc.weight.copy_(layer.ffn.linear1.weight.T)
        block.mlp.c_fc.bias.copy_(layer.ffn.linear1.bias)
        block.mlp.c_proj.weight.copy_(layer.ffn.linear2.weight.T)
        block.mlp.c_proj.bias.copy_(layer.ffn.linear2.bias)
        block.ln_1.load_state_dict(layer.norm1.state_dict())
        block.ln_2.load_state_dict(layer.norm3.state_dict())
    g.ln_f.load_state_dict(ours.decoder_norm.state_dict())
    return hf
