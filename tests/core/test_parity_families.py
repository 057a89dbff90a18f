"""Parity of the variants with the implementations learners meet, on copied weights: PyTorch's pre-norm
encoder layer, Hugging Face's GPT-2 and Llama (GQA, RoPE, RMSNorm, SwiGLU). Dev-only: transformers."""

import pytest
import torch
import transformers
from torch import nn

from core import Transformer, TransformerConfig, generate_key_padding_mask, generate_square_subsequent_mask
from core.model import EncoderLayer
from tests.support.hf_gpt2 import gpt2_from


def tokens(cfg: TransformerConfig) -> torch.Tensor:
    return torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M), generator=torch.Generator().manual_seed(5))  # (N, M)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@torch.no_grad()
def test_a_pre_norm_layer_matches_torch_encoder_layer_norm_first(activation):
    E, nhead, d_ff = 16, 4, 24
    ours = EncoderLayer(E, nhead, d_ff, norm_first=True, activation=activation)
    ref = nn.TransformerEncoderLayer(E, nhead, d_ff, dropout=0.0, activation=activation, batch_first=True,
                                     norm_first=True)
    ref.self_attn.in_proj_weight.copy_(torch.cat([ours.self_attn.W_q.weight, ours.self_attn.W_k.weight,
                                                  ours.self_attn.W_v.weight]))  # (3E, E)
    ref.self_attn.in_proj_bias.copy_(torch.cat([ours.self_attn.W_q.bias, ours.self_attn.W_k.bias,
                                                ours.self_attn.W_v.bias]))  # (3E,)
    ref.self_attn.out_proj.load_state_dict(ours.self_attn.W_o.state_dict())
    ref.linear1.load_state_dict(ours.ffn.linear1.state_dict())
    ref.linear2.load_state_dict(ours.ffn.linear2.state_dict())
    for norm in ("norm1", "norm2"):
        nn.init.normal_(getattr(ours, norm).weight)  # gains away from 1, so a swapped norm would show
        getattr(ref, norm).load_state_dict(getattr(ours, norm).state_dict())
    x = torch.randn(3, 7, E)  # (N, M, E)
    ids = torch.randint(1, 9, (3, 7))
    ids[-1, -2:] = 0
    pad = generate_key_padding_mask(ids)  # (N, M)
    ref.eval()
    torch.testing.assert_close(ours(x, None, pad), ref(x, src_key_padding_mask=pad), atol=1e-5, rtol=1e-5)
    mask = generate_square_subsequent_mask(7)
    torch.testing.assert_close(ours(x, mask), ref(x, src_mask=mask), atol=1e-5, rtol=1e-5)


GPT2_LIKE = TransformerConfig(N=2, M=7, E=16, nhead=4, layers=2, vocab_size=50, arch="decoder-only",
                              norm_first=True, activation="gelu", positional="learned", max_len=12,
                              tie_embeddings=True, seed=3)


@torch.no_grad()
def test_gpt2_logits_match_hugging_face_gpt2():
    """GPT-2 with its parts: pre-norm LayerNorm, learned positions, GELU (the exact form on both sides:
    GPT-2 shipped the tanh approximation), tied output layer without bias, a final norm."""
    cfg = GPT2_LIKE
    ours = Transformer.from_config(cfg)
    hf = gpt2_from(ours, cfg)  # GPT-2 holding our weights
    ids = tokens(cfg)
    ours_logits = ours(None, ids, tgt_mask=generate_square_subsequent_mask(cfg.M))  # (N, M, vocab_size)
    assert hf.lm_head.weight is hf.transformer.wte.weight and hf.lm_head.bias is None
    torch.testing.assert_close(ours_logits, hf(ids).logits, atol=1e-4, rtol=1e-4)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())


LLAMA_LIKE = TransformerConfig(N=2, M=9, E=32, nhead=4, nhead_kv=2, d_ff=40, layers=2, vocab_size=60,
                               arch="decoder-only", norm_first=True, norm="rmsnorm", activation="swiglu",
                               positional="rope", bias=False, seed=4)


def llama_from(ours: Transformer, cfg: TransformerConfig):
    """HF's LlamaForCausalLM holding our weights: q/k/v/o_proj are W_q..W_o, gate/up/down are linear1, 3, 2."""
    hf = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        hidden_size=cfg.E, intermediate_size=cfg.d_ff, num_hidden_layers=cfg.layers, num_attention_heads=cfg.nhead,
        num_key_value_heads=cfg.nhead_kv, vocab_size=cfg.vocab_size, rms_norm_eps=1e-5,
        max_position_embeddings=64, attn_implementation="eager")).eval()
    m = hf.model
    m.embed_tokens.weight.copy_(ours.src_embed.lookup.weight)
    for block, layer in zip(m.layers, ours.decoder):
        for hf_name, name in (("q_proj", "W_q"), ("k_proj", "W_k"), ("v_proj", "W_v"), ("o_proj", "W_o")):
            getattr(block.self_attn, hf_name).weight.copy_(getattr(layer.self_attn, name).weight)
        for hf_name, name in (("gate_proj", "linear1"), ("up_proj", "linear3"), ("down_proj", "linear2")):
            getattr(block.mlp, hf_name).weight.copy_(getattr(layer.ffn, name).weight)
        nn.init.normal_(layer.norm1.weight)  # gains away from 1, so a swapped norm would show
        nn.init.normal_(layer.norm3.weight)
        block.input_layernorm.weight.copy_(layer.norm1.weight)
        block.post_attention_layernorm.weight.copy_(layer.norm3.weight)
    m.norm.weight.copy_(ours.decoder_norm.weight)
    hf.lm_head.weight.copy_(ours.generator.weight)
    return hf


@pytest.mark.parametrize("nhead_kv", [2, 1, 4])  # GQA, MQA, MHA
@torch.no_grad()
def test_llama_logits_match_hugging_face_llama(nhead_kv):
    cfg = LLAMA_LIKE.replace(nhead_kv=nhead_kv)
    ours = Transformer.from_config(cfg)
    hf = llama_from(ours, cfg)
    ids = tokens(cfg)
    ours_logits = ours(None, ids, tgt_mask=generate_square_subsequent_mask(cfg.M))  # (N, M, vocab_size)
    torch.testing.assert_close(ours_logits, hf(ids).logits, atol=1e-4, rtol=1e-4)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())
