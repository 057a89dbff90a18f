"""core.param_parts: the parameters by part, total against active, and real models against their published
counts (the total exactly, the active count to the announced figure's last digit)."""

import pytest

from core import trace
from core.config import DEFAULT, MIXTRAL_8X7B, REAL_MODELS, T5_MODELS, T5_SMALL, TINY_MLA, TINY_MOE, TINY_T5
from core.memory import active_params, param_counts
from core.param_parts import PARTS, near, param_parts, part_of, published_check


def test_tiny_moes_parts_in_order_with_only_the_routed_experts_partly_active():
    parts = {p.name: p for p in param_parts(TINY_MOE)}
    assert list(parts) == ["embeddings", "attention", "FFN", "experts", "shared experts", "router", "norms",
                           "output layer"]
    # 2 layers with experts, 8 SwiGLU experts of 3 · 16 · 8 = 384 each, 2 of them a token.
    assert (parts["experts"].total, parts["experts"].active) == (2 * 8 * 384, 2 * 2 * 384)
    assert parts["router"].total == parts["router"].active == 2 * 16 * 8
    assert parts["shared experts"].active == parts["shared experts"].total == 2 * 384
    assert sum(p.total for p in parts.values()) == param_counts(TINY_MOE)["total"]
    assert sum(p.active for p in parts.values()) == active_params(TINY_MOE) == trace(TINY_MOE).active_params


def test_a_dense_model_has_no_expert_parts_and_is_all_active():
    for cfg in (DEFAULT, TINY_MLA, TINY_T5):
        parts = param_parts(cfg)
        assert not {"experts", "shared experts", "router"} & {p.name for p in parts}
        assert all(p.active == p.total for p in parts)
        assert sum(p.total for p in parts) == param_counts(cfg)["total"]
    assert [p.name for p in param_parts(DEFAULT)] == ["embeddings", "attention", "FFN", "norms", "output layer"]


def test_every_component_belongs_to_a_part():
    assert part_of("decoder cross-attention") == "attention" and part_of("attention: query") == "attention"
    assert part_of("encoder LayerNorms") == "norms" and part_of("positional table") == "embeddings"
    assert part_of("decoder FFN") == "FFN" and set(PARTS) >= {"router", "experts"}
    with pytest.raises(KeyError, match="'gizmo'"):
        part_of("gizmo")


@pytest.mark.parametrize("name", list(REAL_MODELS) + list(T5_MODELS))
def test_every_real_model_matches_its_published_total(name):
    cfg = {**REAL_MODELS, **T5_MODELS}[name]
    check = published_check(cfg.replace(N=3))
    assert check.model == name and check.total_matches and check.total == check.published


def test_the_active_counts_against_the_announced_figures():
    checks = {name: published_check(cfg) for name, cfg in REAL_MODELS.items() if cfg.moe}
    assert {name: c.published_active for name, c in checks.items()} == {
        "Mixtral-8x7B": "12.9B", "Qwen3-30B-A3B": "3.3B", "DeepSeek-V2-Lite": "2.4B", "DeepSeek-V3": "37B"}
    assert checks["Mixtral-8x7B"].active == 12_879_925_248 and checks["Mixtral-8x7B"].active_agrees
    assert checks["DeepSeek-V3"].active == 37_552_282_624 and checks["DeepSeek-V3"].active_agrees
    assert checks["Qwen3-30B-A3B"].active_agrees
    lite = checks["DeepSeek-V2-Lite"]  # 2.66B counted; 2.45B without the token embeddings
    assert not lite.active_agrees and lite.agrees_without_embeddings
    assert lite.active - lite.embeddings == 2_661_150_208 - 209_715_200
    assert published_check(REAL_MODELS["Llama-2-7B"]).published_active is None


def test_near_is_within_one_unit_of_the_figures_last_digit():
    assert near(12_879_925_248, "12.9B") and near(60_506_624, "60M") and near(37_552_282_624, "37B")
    assert not near(2_661_150_208, "2.4B") and not near(38_000_000_001, "37B")


def test_a_config_that_is_no_real_model_has_no_published_count():
    assert published_check(TINY_MOE) is None and published_check(TINY_T5) is None
    assert published_check(MIXTRAL_8X7B.replace(top_k=1)) is None
    assert published_check(T5_SMALL.replace(d_ff=1024)) is None
