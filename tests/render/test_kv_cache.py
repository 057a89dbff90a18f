"""render.kv_cache: the cache's bytes against M + G for MHA, GQA and MQA on one chart, the config's own point
marked and said in words."""

from core import TransformerConfig
from core.config import LLAMA2_70B
from core.views import kv_cache_view
from render.kv_cache import cache_formula, kv_cache_spec


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
