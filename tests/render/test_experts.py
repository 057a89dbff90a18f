"""render.experts: the parameters by part with the active share inside, the router's heatmap labelled with the
tokens and the chosen top_k ringed, and tokens per expert against the even share."""

import pytest

from core import trace
from core.config import DEEPSEEK_V3, TINY_MOE
from core.param_parts import param_parts
from core.routing import routing_view
from render.experts import param_parts_spec, routing_spec, short_count, tokens_per_expert_spec

LABELS = [f"{i} w{i}" for i in range(8)]


def test_the_parts_chart_has_a_bar_per_part_with_its_active_share_inside():
    spec = param_parts_spec(param_parts(DEEPSEEK_V3))
    rows = spec["layer"][0]["data"]["values"]
    assert [r["label"] for r in rows] == [
        "embeddings: 926.7M", "attention: 11.4B", "FFN: 1.2B", "experts: 653.9B, 20.4B active",
        "shared experts: 2.6B", "router: 106.4M", "norms: 881,664", "output layer: 926.7M"]
    assert spec["layer"][0]["encoding"]["x"]["field"] == "total" and spec["layer"][1]["encoding"]["x"]["field"] == \
        "active"
    assert "671,026,404,352 parameters by part, 37,552,282,624 of them active" in spec["description"]
    assert "experts 653,908,770,816 (20,434,649,088 active)" in spec["description"]
    assert short_count(999_999) == "999,999" and short_count(12_879_925_248) == "12.9B"


def test_the_routing_heatmap_has_the_tokens_as_rows_and_the_top_k_ringed():
    v = routing_view(trace(TINY_MOE))
    spec = routing_spec(v, LABELS)
    cells = spec["layer"][0]["data"]["values"]
    assert len(cells) == 8 * 8 and [c["token"] for c in cells[::8]] == LABELS
    assert spec["layer"][0]["encoding"]["y"]["sort"] == LABELS
    for i, chosen in enumerate(v.chosen):
        ranks = {c["expert"]: c["rank"] for c in cells[8 * i:8 * i + 8] if c["rank"]}
        assert ranks == {chosen[0]: 1, chosen[1]: 2}
    assert all(layer["transform"] == [{"filter": "datum.rank > 0"}] for layer in spec["layer"][1:])
    assert spec["layer"][0]["data"]["values"][0]["weight"] == pytest.approx(v.probs[0][0])
    assert f"First choices: 0 w0 → expert {v.chosen[0][0]}" in spec["description"]


def test_tokens_per_expert_against_the_even_share():
    v = routing_view(trace(TINY_MOE))
    spec = tokens_per_expert_spec(v, 2)
    assert [r["tokens"] for r in spec["layer"][0]["data"]["values"]] == v.counts
    [even] = spec["layer"][1]["data"]["values"]
    assert even == {"tokens": 4.0, "what": "even share N·M·top_k / n_experts = 2·8·2 / 8 = 4"}
    with pytest.raises(ValueError, match="shape-only"):
        tokens_per_expert_spec(routing_view(trace(TINY_MOE, shape_only=True)), 2)
