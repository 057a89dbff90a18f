"""The Explorer opened by a link to a mixture of experts, latent attention or a window: total and active
parameters and where they sit, the routing over seeded ids or a text (only the even share after a shape-only
pass), every kind of KV cache with DeepSeek-V3's and Mixtral's figures, and none of it on a dense config."""

from __future__ import annotations

import json
import re

import pytest

from core.config import DEEPSEEK_V3, DEFAULT, MISTRAL_7B, MIXTRAL_8X7B, TINY_LLAMA, TINY_MLA, TINY_MOE
from tests.support.apptest import explorer_opened, make_app, running
from tests.support.links import config_link


def opened(cfg, tab: str = "Memory against M", **extra: str):
    at = make_app(config_link(cfg) | extra).run()
    assert running(at).replace(N=cfg.N, M=cfg.M, vocab_size=cfg.vocab_size, max_len=cfg.max_len) == cfg or extra
    at = explorer_opened(at, tab=tab)
    assert not at.exception
    assert not [e.value for e in at.error]
    return at


def specs(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def described(at, start: str) -> list[dict]:
    return [s for s in specs(at) if s.get("description", "").startswith(start)]


def words(at) -> str:
    return "\n".join(e.value for kind in ("markdown", "caption", "success", "info", "warning")
                     for e in getattr(at, kind))


def headers(at) -> list[str]:
    return [h.value for h in at.header]


def test_tiny_moe_shows_total_and_active_and_where_they_sit():
    at = opened(TINY_MOE, tab="Parameters")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["parameters"] == "15,088" and metrics["active for one token"] == "10,480"
    assert metrics["parameters in total"] == "15,088"  # the tab's own pair, side by side
    [chart] = described(at, "Bar chart of the model's 15,088 parameters by part, 10,480 of them active")
    assert "experts 6,144 (1,536 active)" in chart["description"]


def test_tiny_moe_routes_its_seeded_ids():
    at = opened(TINY_MOE)
    assert "Routing, live" in headers(at)
    [heatmap] = described(at, "Heatmap of the router's weights in layer 1")
    rows = heatmap["layer"][0]["encoding"]["y"]["sort"]
    assert len(rows) == 8 and all(re.fullmatch(rf"{i}: id \d+", row) for i, row in enumerate(rows))
    [counts] = described(at, "Bar chart of the tokens each of the 8 experts got")
    assert sum(r["tokens"] for r in counts["layer"][0]["data"]["values"]) == 2 * 8 * 2
    assert "the one shape in the whole model that depends on the data" in words(at)


def test_tiny_moe_routes_the_learners_text():
    at = opened(TINY_MOE, text="the cat sat", tokens="word")
    [heatmap] = described(at, "Heatmap of the router's weights in layer 1")
    assert heatmap["layer"][0]["encoding"]["y"]["sort"] == ["0 the", "1 ␣", "2 cat", "3 ␣", "4 sat"]
    assert "over your text" in words(at)


def test_deepseek_v3_renders_from_a_shape_only_pass_with_its_figures():
    at = opened(DEEPSEEK_V3, tab="Parameters")
    text = words(at)
    assert "no token was routed, so how many tokens each expert gets is unknown here" in text
    assert "N·M·top_k / n_experts = 1·4096·8 / 256 = 128" in text
    assert "**671,026,404,352**: DeepSeek-V3's published 671B" in text
    assert "**37,552,282,624** active: DeepSeek-V3's announcement gives 37B" in text
    assert "(512 + 64) · 61 = **35,136 numbers a token**" in text
    assert "2 · 128 · 128 · 61 = **1,998,848**, about **57×** as many" in text
    assert not described(at, "Heatmap of the router's weights")


def test_mixtrals_cache_in_bf16():
    at = opened(MIXTRAL_8X7B)
    assert "2 · 32 · 8 · 128 · 2 = **131,072 bytes**" in words(at)
    [kv] = described(at, "Line chart, log-log, of the KV cache's bytes")
    assert kv["layer"][1]["data"]["values"][0]["attention"] == "GQA (nhead_kv = 8)"  # ringed


@pytest.mark.parametrize("cfg,own", [(TINY_MLA, "MLA (kv_lora_rank + rope_head_dim = 8 + 4)"),
                                     (MISTRAL_7B, "window W = 4,096 (nhead_kv = 8)"),
                                     (TINY_LLAMA.replace(window=4, global_every=2),
                                      "window W = 4 (nhead_kv = 2, one layer in 2 full)")])
def test_the_kv_chart_draws_every_kind_and_rings_the_configs_own(cfg, own):
    at = opened(cfg)
    [kv] = described(at, "Line chart, log-log, of the KV cache's bytes")
    domain = kv["layer"][0]["encoding"]["color"]["scale"]["domain"]
    assert {d.split(" ")[0] for d in domain} >= {"MHA", "MQA", "MLA", "window"} and own in domain
    assert kv["layer"][1]["data"]["values"][0]["attention"] == own
    assert "Live check failed" not in words(at)


def test_a_dense_config_shows_no_expert_part():
    at = opened(DEFAULT.replace(arch="decoder-only"), tab="Parameters")
    assert "Routing, live" not in headers(at) and "KV cache" in headers(at)
    assert "active for one token" not in [m.label for m in at.metric]
    [chart] = described(at, "Bar chart of the model's")
    assert "parameters by component" in chart["description"] and "active" not in chart["description"]
    at = opened(DEFAULT)
    assert "Routing, live" not in headers(at) and "KV cache" not in headers(at)


def test_the_tiny_moe_preset_link_opens_on_its_routing_and_parts():
    at = explorer_opened(make_app({"preset": "Tiny MoE (8 experts, top 2)"}).run(), tab="Parameters")
    assert not at.exception and running(at) == TINY_MOE
    assert "Routing, live" in headers(at) and described(at, "Heatmap of the router's weights in layer 1")
    assert described(at, "Bar chart of the model's 15,088 parameters by part")
