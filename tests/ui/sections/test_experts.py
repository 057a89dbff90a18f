"""ui.sections.experts and ui.sections.kv_cache drawn on their own for a config (the page draws them for the sidebar's):
total against active and the published counts, the routing over seeded ids or a text, the even share after a
shape-only pass, and the KV cache's figures at DeepSeek-V3's and Mixtral's sizes."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest


def script(name: str, text: str = "", shape_only: bool = False):
    from core import config
    from core.tokens import text_config, tokenize
    from ui.sections.experts import moe_parameters, routing_section
    from ui.sections.kv_cache import kv_cache_section
    from ui.sections.your_text import YourText

    cfg, mine = getattr(config, name), None
    if text:
        tokens = tokenize(text, "word")
        cfg = text_config(cfg, tokens)
        mine = YourText(text, "word", None, tokens, cfg)
    if cfg.moe:
        moe_parameters(cfg)
        routing_section(cfg, mine, shape_only)
    kv_cache_section(cfg)


def drawn(name: str, text: str = "", shape_only: bool = False) -> AppTest:
    at = AppTest.from_function(script, args=(name, text, shape_only), default_timeout=120).run()
    assert not at.exception and not at.error
    return at


def specs(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def words(at) -> str:
    return "\n".join(e.value for kind in ("markdown", "caption", "success", "info", "warning")
                     for e in getattr(at, kind))


def test_tiny_moe_routes_the_seeded_ids_and_counts_against_the_even_share():
    at = drawn("TINY_MOE")
    [heatmap] = [s for s in specs(at) if s["description"].startswith("Heatmap of the router's weights")]
    [counts] = [s for s in specs(at) if s["description"].startswith("Bar chart of the tokens each")]
    rows = heatmap["layer"][0]["data"]["values"]
    assert rows[0]["token"].startswith("0: id ") and len(rows) == 8 * 8
    assert counts["layer"][1]["data"]["values"][0]["tokens"] == 4.0
    text = words(at)
    assert "the one shape in the whole model that depends on the data" in text
    assert "parameters in total" in [m.label for m in at.metric] and "active for one token" in [
        m.label for m in at.metric]
    assert [s.key for s in at.selectbox] == ["x_route_item"]  # N = 2 sequences to choose from


def test_the_routing_heatmap_labels_its_rows_with_the_learners_tokens():
    at = drawn("TINY_MOE", "the cat sat on the mat")
    [heatmap] = [s for s in specs(at) if "router's weights" in s["description"]]
    assert heatmap["layer"][0]["encoding"]["y"]["sort"] == ["0 the", "1 ␣", "2 cat", "3 ␣", "4 sat", "5 ␣", "6 on",
                                                            "7 ␣", "8 the", "9 ␣", "10 mat"]  # spaces are tokens
    assert "over your text" in words(at)


def test_a_shape_only_pass_says_the_counts_are_unknown_and_gives_the_even_share():
    at = drawn("TINY_MOE", shape_only=True)
    [info] = [i.value for i in at.info if i.value.startswith("Shape-only pass")]
    assert "unknown" in info and "N·M·top_k / n_experts = 2·8·2 / 8 = 4" in info
    assert not [s for s in specs(at) if "router's weights" in s["description"]]


def test_deepseek_v3s_counts_and_cache_in_words():
    at = drawn("DEEPSEEK_V3", shape_only=True)
    text = words(at)
    assert "**671,026,404,352**: DeepSeek-V3's published 671B" in text
    assert "**37,552,282,624** active: DeepSeek-V3's announcement gives 37B" in text
    assert "(512 + 64) · 61 = **35,136 numbers a token**" in text
    assert "2 · 128 · 128 · 61 = **1,998,848**, about **57×** as many" in text
    [kv] = [s for s in specs(at) if "KV cache" in s["description"]]
    assert "MLA (kv_lora_rank + rope_head_dim = 512 + 64)" in kv["layer"][0]["encoding"]["color"]["scale"]["domain"]


def test_mixtrals_cache_in_bf16_and_its_active_count():
    at = drawn("MIXTRAL_8X7B", shape_only=True)
    text = words(at)
    assert "2 · 32 · 8 · 128 · 2 = **131,072 bytes**" in text
    assert "**12,879,925,248** active: Mixtral-8x7B's announcement gives 12.9B" in text


def test_mistrals_window_goes_flat_and_the_live_check_runs_on_a_tiny_window():
    at = drawn("MISTRAL_7B")
    assert "The dashed window line goes flat at W = 4,096" in words(at)
    at = drawn("TINY_LLAMA")
    assert any(s.value.startswith("Live check:") for s in at.success)
