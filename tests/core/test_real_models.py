"""Real models as constants, counted from the built module to the published parameter figure, and against
Hugging Face's own models built on the meta device (nothing allocated). Dev-only: transformers."""

import pytest
import torch
import transformers

from core import trace
from core.config import (DEEPSEEK_V2_LITE, DEEPSEEK_V3, GPT2_SMALL, GPT3, LLAMA2_7B, LLAMA2_70B, LLAMA3_8B, MISTRAL_7B, MIXTRAL_8X7B, QWEN3_30B_A3B,
                         REAL_MODELS, TransformerConfig)
from core.memory import active_params, param_counts, param_formulas

PUBLISHED = {GPT2_SMALL: 124_439_808, LLAMA2_7B: 6_738_415_616, LLAMA2_70B: 68_976_648_192,
             GPT3: 174_604_259_328, LLAMA3_8B: 8_030_261_248, MISTRAL_7B: 7_241_732_096,
             MIXTRAL_8X7B: 46_702_792_704, QWEN3_30B_A3B: 30_532_122_624}
ACTIVE = {MIXTRAL_8X7B: 12_879_925_248, QWEN3_30B_A3B: 3_353_032_704}  # a dense model's active count is its total


def hugging_face(cfg: TransformerConfig) -> torch.nn.Module:
    """HF's model of this config's kind, built on the meta device."""
    with torch.device("meta"):
        sizes = dict(hidden_size=cfg.E, num_hidden_layers=cfg.layers, num_attention_heads=cfg.nhead,
                     num_key_value_heads=cfg.nhead_kv, vocab_size=cfg.vocab_size, head_dim=cfg.d_k)
        if cfg.moe and cfg.qk_norm:
            return transformers.Qwen3MoeForCausalLM(transformers.Qwen3MoeConfig(
                intermediate_size=cfg.d_ff, moe_intermediate_size=cfg.d_ff_expert, num_experts=cfg.n_experts,
                num_experts_per_tok=cfg.top_k, norm_topk_prob=cfg.norm_topk, **sizes))
        if cfg.moe:
            return transformers.MixtralForCausalLM(transformers.MixtralConfig(
                intermediate_size=cfg.d_ff_expert, num_local_experts=cfg.n_experts, num_experts_per_tok=cfg.top_k,
                **sizes))
        if cfg.window:
            return transformers.MistralForCausalLM(transformers.MistralConfig(
                intermediate_size=cfg.d_ff, sliding_window=cfg.window, **sizes))
        if cfg.norm == "rmsnorm":
            return transformers.LlamaForCausalLM(transformers.LlamaConfig(
                hidden_size=cfg.E, intermediate_size=cfg.d_ff, num_hidden_layers=cfg.layers,
                num_attention_heads=cfg.nhead, num_key_value_heads=cfg.nhead_kv, vocab_size=cfg.vocab_size))
        return transformers.GPT2LMHeadModel(transformers.GPT2Config(
            n_embd=cfg.E, n_layer=cfg.layers, n_head=cfg.nhead, n_inner=cfg.d_ff, n_positions=cfg.max_len,
            vocab_size=cfg.vocab_size))


def unique_count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())  # parameters() lists a tied matrix once


NAMES = [next(name for name, c in REAL_MODELS.items() if c == cfg) for cfg in PUBLISHED]


@pytest.mark.parametrize("cfg", list(PUBLISHED), ids=NAMES)
def test_a_real_models_parameters_equal_the_published_figure_and_hugging_faces(cfg):
    t = trace(cfg)
    assert t.shape_only  # far over the memory budget: the meta device
    assert t.params["total"] == PUBLISHED[cfg] == unique_count(hugging_face(cfg))
    assert t.params == param_counts(cfg)
    active = ACTIVE.get(cfg, PUBLISHED[cfg])
    assert t.to_dict()["params"]["active"] == t.active_params == active_params(cfg) == active


def test_mixtrals_kv_cache_in_bf16_is_131072_bytes_a_token():
    """2 · layers · nhead_kv · d_k numbers a position: 2 · 32 · 8 · 128 = 65,536, two bytes each."""
    kv = trace(MIXTRAL_8X7B).to_dict()["kv_cache"]
    assert kv["bytes_per_token_fp16"] == 131_072 and kv["bytes_per_token"] == 262_144


def test_real_models_are_their_families():
    # DeepSeek's models are counted against HF's in tests/core/test_latent_attention.py: tracing V3 is slow.
    assert set(REAL_MODELS.values()) == set(PUBLISHED) | {DEEPSEEK_V2_LITE, DEEPSEEK_V3}
    assert all(cfg.arch == "decoder-only" and cfg.norm_first for cfg in REAL_MODELS.values())
    assert MISTRAL_7B.window == 4096 and MIXTRAL_8X7B.n_experts == 8 and MIXTRAL_8X7B.top_k == 2
    assert QWEN3_30B_A3B.d_k == 128 != QWEN3_30B_A3B.E // QWEN3_30B_A3B.nhead and QWEN3_30B_A3B.qk_norm
    assert LLAMA2_70B.nhead_kv == 8 and LLAMA2_70B.d_k == 128


def test_llama_70b_attention_holds_83_9_million_weights_a_layer_not_268():
    """The seed note's '200M parameters just on 1 attention mechanism' counts 64 full K/V heads: grouped-query
    attention gives K and V 8 heads, so Q, K and V come to about 83.9M (W^O adds 67.1M)."""
    per_layer = param_counts(LLAMA2_70B)["self-attention"] // LLAMA2_70B.layers
    qkv = per_layer - LLAMA2_70B.E ** 2
    assert qkv == 83_886_080
    full = param_counts(LLAMA2_70B.replace(nhead_kv=64))["self-attention"] // 80 - 8192 ** 2
    assert full == 3 * 8192 ** 2


def test_every_component_has_a_formula():
    for cfg in (*REAL_MODELS.values(), TransformerConfig(), TransformerConfig(arch="encoder-only", bias=False)):
        formulas, counts = param_formulas(cfg), param_counts(cfg)
        assert formulas.keys() == counts.keys()
        assert all(formulas[k] for k in formulas)
    llama = param_formulas(LLAMA2_70B)
    assert llama["self-attention"] == "layers·(2(E² + E·nhead_kv·d_k))"
    assert llama["FFN"] == "layers·(3E·d_ff)" and llama["norms"] == "layers·2·E + E"
    assert param_formulas(GPT2_SMALL)["output layer"] == "0 (tied)"
