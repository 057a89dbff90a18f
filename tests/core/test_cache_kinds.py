"""core.cache_kinds: every way to attend at a config's sizes, its numbers a token and its bytes against the tokens
held; a window's line flat from W; the DeepSeek-V2 table's count at DeepSeek-V3's sizes; Mixtral's bytes a token."""

import pytest

from core import TransformerConfig
from core.cache_kinds import MISTRAL_WINDOW, cache_kinds, kv_cache_view, latent_saving
from core.config import DEEPSEEK_V3, MISTRAL_7B, MIXTRAL_8X7B, TINY_LLAMA, TINY_MLA
from core.memory import FP16_BYTES, kv_cache_bytes, kv_cache_per_token


def by_name(cfg):
    return {k.name: k for k in cache_kinds(cfg)}


def test_deepseek_v3s_latent_caches_35136_numbers_a_token_57_times_fewer_than_mha():
    s = latent_saving(DEEPSEEK_V3)
    assert s.mla == (512 + 64) * 61 == 35_136
    assert s.mha == 2 * 128 * 128 * 61 == 1_998_848
    assert round(s.ratio) == 57
    kinds = by_name(DEEPSEEK_V3)
    assert DEEPSEEK_V3.layers * kinds["MLA"].numbers == 35_136
    assert DEEPSEEK_V3.layers * kinds["MHA"].numbers == 1_998_848  # the chart's MHA line counts as the table does


def test_mixtral_adds_131072_bytes_a_token_in_bf16():
    kinds = by_name(MIXTRAL_8X7B)
    assert kinds["GQA"].per_token(MIXTRAL_8X7B, FP16_BYTES) == 2 * 32 * 8 * 128 * 2 == 131_072
    assert kv_cache_view(MIXTRAL_8X7B, 0).own == "GQA"


@pytest.mark.parametrize("cfg", [TINY_LLAMA, TINY_MLA, MISTRAL_7B, MIXTRAL_8X7B, DEEPSEEK_V3,
                                 TINY_LLAMA.replace(window=4, global_every=2), TINY_LLAMA.replace(nhead_kv=4)])
def test_the_configs_own_kind_is_its_cache_exactly(cfg):
    for G in (0, 3, 5000):
        v = kv_cache_view(cfg, G)
        own = v.kind(v.own)
        assert v.chosen["bytes"] == own.bytes(cfg, cfg.M + G) == v.bytes == kv_cache_bytes(cfg, G)
        assert own.per_token(cfg) == kv_cache_per_token(cfg)


def test_a_windows_line_goes_flat_at_w():
    v = kv_cache_view(TINY_LLAMA, 0)
    window = [p["bytes"] for p in v.points if p["attention"] == v.kind("window").label]
    tokens = sorted({p["tokens"] for p in v.points})
    assert v.kind("window").window == MISTRAL_WINDOW and tokens[-1] == 4 * MISTRAL_WINDOW
    flat = [b for n, b in zip(tokens, window) if n >= MISTRAL_WINDOW]
    assert len(flat) == 3 and len(set(flat)) == 1
    rising = [b for n, b in zip(tokens, window) if n <= MISTRAL_WINDOW]
    assert rising == sorted(set(rising))  # strictly rising up to W
    gqa = [p["bytes"] for p in v.points if p["attention"] == v.kind("GQA").label]
    assert gqa[:len(rising)] == rising  # the same K/V heads: the same line until W


def test_full_layers_keep_growing_past_the_window():
    cfg = TINY_LLAMA.replace(window=4, global_every=2)  # layer 1 full, layer 0 windowed
    w = by_name(cfg)["window"]
    assert (w.held(cfg, 3), w.held(cfg, 10)) == (6, 4 + 10)
    assert w.label == "window W = 4 (nhead_kv = 2, one layer in 2 full)"


def test_the_kinds_at_a_small_config():
    cfg = TransformerConfig(arch="decoder-only", E=16, nhead=4, nhead_kv=2, layers=2)
    kinds = by_name(cfg)
    assert {n: k.numbers for n, k in kinds.items()} == {"MHA": 32, "GQA": 16, "MQA": 8, "MLA": 16 + 2,
                                                       "window": 16}
    assert kinds["MLA"].label == "MLA (kv_lora_rank + rope_head_dim = 16 + 2, DeepSeek-V2's ratios to d_k)"


def test_no_saving_without_a_latent():
    with pytest.raises(ValueError, match="attention='mha' caches no latent"):
        latent_saving(TINY_LLAMA)
