"""Multi-head latent attention (core.latent_attention): parity with Hugging Face's DeepSeek-V2 on copied weights,
live shapes against the rows' formulas, the KV cache of latents, parameter counts and clear errors."""

import pytest
import torch
import transformers
from hypothesis import given, settings, strategies as st

from core import Transformer, TransformerConfig, generate_square_subsequent_mask
from tests.support.deepseek import copy_dense_model, deepseek_v2_config, shake_norms

MLA_BASE = dict(arch="decoder-only", attention="mla", positional="rope", norm="rmsnorm", norm_first=True,
                activation="swiglu", bias=False)


def tiny(**changes) -> TransformerConfig:
    sizes = dict(N=2, M=7, E=16, nhead=4, layers=2, d_ff=24, vocab_size=50, seed=3, kv_lora_rank=12,
                 rope_head_dim=4, nope_head_dim=6, v_head_dim=5)
    return TransformerConfig(**(MLA_BASE | sizes | changes))


def ids_for(cfg: TransformerConfig) -> torch.Tensor:
    return torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M), generator=torch.Generator().manual_seed(5))  # (N, M)


@pytest.mark.parametrize("changes", [{}, {"q_lora_rank": 10}, {"q_lora_rank": 6, "bias": True},
                                     {"tie_embeddings": True, "nhead": 2, "rope_head_dim": 8}],
                         ids=["uncompressed-query", "compressed-query", "biases", "tied-two-heads"])
@torch.no_grad()
def test_logits_match_hugging_face_deepseek_v2(changes):
    cfg = tiny(**changes)
    ours = Transformer.from_config(cfg)
    shake_norms(ours)
    hf = transformers.DeepseekV2ForCausalLM(deepseek_v2_config(cfg)).eval()
    copy_dense_model(ours, hf)
    ids = ids_for(cfg)
    logits = ours(None, ids, tgt_mask=generate_square_subsequent_mask(cfg.M))  # (N, M, vocab_size)
    torch.testing.assert_close(logits, hf(ids).logits, atol=1e-4, rtol=1e-4)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())
