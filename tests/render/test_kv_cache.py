"""render.kv_cache: the cache's bytes against M + G for MHA, GQA, MQA, MLA and a window on one chart, the config's
own point marked and said in words; each kind's bytes a token; DeepSeek-V3's and Mixtral's figures in words."""

from core import TransformerConfig
from core.cache_kinds import latent_saving
from core.config import DEEPSEEK_V3, LLAMA2_70B, MISTRAL_7B, MIXTRAL_8X7B, TINY_LLAMA, TINY_MLA
from core.views import kv_cache_view
from render.kv_cache import cache_formula, kinds_frame, kv_cache_spec, latent_saving_words, per_token_words


def test_one_line_per_kind_and_the_chosen_point_marked():
    v = kv_cache_view(LLAMA2_70B, 0)
    spec = kv_cache_spec(v)
    lines = spec["layer"][0]
    assert lines["encoding"]["color"]["scale"]["domain"] == [
        "MHA (nhead_kv = 64)", "GQA (nhead_kv = 8)", "MQA (nhead_kv = 1)",
        "MLA (kv_lora_rank + rope_head_dim = 512 + 64, DeepSeek-V2's ratios to d_k)",
        "window W = 4,096 (nhead_kv = 8)"]
    assert {p["attention"] for p in lines["data"]["values"]} == set(lines["encoding"]["color"]["scale"]["domain"])
    [chosen] = spec["layer"][1]["data"]["values"]
    assert (chosen["tokens"], chosen["bytes"]) == (4096, 2 * 80 * 8 * 128 * 4096 * 4)
    assert chosen["what"] == "yours: GQA (nhead_kv = 8), M + G = 4,096, 2.5 GiB"
    assert "yours: GQA (nhead_kv = 8), M + G = 4,096, 2.5 GiB" in spec["description"]
    assert spec["layer"][2]["data"]["values"][0]["label"] == "yours: 2.5 GiB"  # said on the chart, not only hovered


def test_a_config_with_one_head_draws_mha_mla_and_the_window():
    v = kv_cache_view(TransformerConfig(arch="decoder-only", E=8, nhead=1), 3)
    spec = kv_cache_spec(v, "dark")
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == [
        "MHA (nhead_kv = 1)", "MLA (kv_lora_rank + rope_head_dim = 32 + 4, DeepSeek-V2's ratios to d_k)",
        "window W = 4,096 (nhead_kv = 1)"]


def test_the_formula_has_the_configs_numbers():
    cfg = TransformerConfig(arch="decoder-only", N=2, M=8, E=16, nhead=2, layers=2)
    assert cache_formula(cfg, kv_cache_view(cfg, 4)) == (
        "2 · layers · N · nhead_kv · (M + G) · d_k · 4 bytes = 2 · 2 · 2 · 2 · 12 · 8 · 4 = 6,144 bytes (6.0 KiB); "
        "in fp16 or bf16, 3.0 KiB")


def test_the_window_line_is_dashed_and_said_to_go_flat():
    v = kv_cache_view(MISTRAL_7B, 0)
    spec = kv_cache_spec(v)
    dash = spec["layer"][0]["encoding"]["strokeDash"]
    assert dash["condition"]["test"] == "datum.attention == 'window W = 4,096 (nhead_kv = 8)'"
    assert "the window's line is dashed and flat from W on (W = 4,096)" in spec["description"]
    assert spec["layer"][1]["data"]["values"][0]["attention"] == "window W = 4,096 (nhead_kv = 8)"


def test_deepseek_v3s_words_and_table():
    v = kv_cache_view(DEEPSEEK_V3, 0)
    words = latent_saving_words(latent_saving(DEEPSEEK_V3))
    assert "(512 + 64) · 61 = **35,136 numbers a token**" in words
    assert "2 · 128 · 128 · 61 = **1,998,848**, about **57×** as many" in words
    frame = kinds_frame(DEEPSEEK_V3, v)
    assert frame["attention"].tolist() == ["yours: MLA (latent 512 + rotary key 64)", "MHA (nhead_kv = 128)",
                                           "GQA (nhead_kv = 16)", "MQA (nhead_kv = 1)", "window W = 4,096"]
    assert frame["numbers, all layers"].tolist()[:2] == [35_136, 1_998_848]
    assert "61 · 576 · 2 = **70,272 bytes**" in per_token_words(DEEPSEEK_V3, v)


def test_mixtrals_bytes_a_token_in_bf16():
    v = kv_cache_view(MIXTRAL_8X7B, 0)
    assert "2 · 32 · 8 · 128 · 2 = **131,072 bytes**" in per_token_words(MIXTRAL_8X7B, v)
    assert kinds_frame(MIXTRAL_8X7B, v)["bytes, bf16"][0] == 131_072


def test_the_formula_of_a_window_and_of_a_latent():
    cfg = TINY_LLAMA.replace(window=4, global_every=2)
    assert cache_formula(cfg, kv_cache_view(cfg, 2)).startswith(
        "2 · N · nhead_kv · d_k · 4 bytes · (windowed layers · min(M + G, W) + full layers · (M + G)) = 2 · 2 · 2 · 4 "
        "· 4 · (1 · 4 + 1 · 10) = 1,792 bytes")
    assert cache_formula(TINY_MLA, kv_cache_view(TINY_MLA, 0)).startswith(
        "layers · N · (M + G) · (kv_lora_rank + rope_head_dim) · 4 bytes = 2 · 2 · 8 · (8 + 4) · 4 = 1,536 bytes")


def test_a_small_saving_keeps_a_decimal():
    assert "2 · 2 · 4 · 2 = **32**, about **1.3×** as many" in latent_saving_words(latent_saving(TINY_MLA))
