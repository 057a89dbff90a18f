"""The later parts' experiments (quizzes/experiments/parts.py): they run where the config has their part, with a
clear error where it has not, name every value, stay small at real models' sizes and leave the global random
stream alone."""

import pytest
import torch

from core import DEFAULT, trace
from core.config import DEEPSEEK_V2_LITE, DEEPSEEK_V3, MISTRAL_7B, QWEN3_30B_A3B, TINY_MOE
from quizzes.experiments import EXPERIMENTS, TAKES_SHAPES, Evidence, run
from quizzes.experiments.parts import PARTS, reach

from .conftest import PART_CONFIGS


def _configs(name):
    has = PARTS[name][1]
    return [(n, c) for n, c in PART_CONFIGS.items() if has(c)]


CASES = [pytest.param(name, cfg, id=f"{name}-{n}") for name in PARTS for n, cfg in _configs(name)]


def test_every_part_experiment_is_registered_and_takes_the_pages_trace():
    assert set(PARTS) <= set(EXPERIMENTS) and set(PARTS) <= TAKES_SHAPES


@pytest.mark.parametrize("name, cfg", CASES)
def test_runs_and_names_every_value(name, cfg):
    state = torch.get_rng_state()
    ev = run(name, cfg)
    assert torch.equal(state, torch.get_rng_state())
    assert isinstance(ev, Evidence) and ev.name == name and ev.values and ev.records
    assert {ev.chart[k] for k in ("x", "y") if k in ev.chart} <= set(ev.records[0])
    assert sorted(ev.labels) == sorted(ev.values)
    assert all(0 < len(text) <= 70 for text in ev.labels.values())
    assert run(name, cfg, trace(cfg, shape_only=True)) == ev  # the page's own shape-only trace gives the same


@pytest.mark.parametrize("name", list(PARTS))
def test_a_config_without_the_part_gets_a_clear_error(name):
    with pytest.raises(ValueError, match=f"the {name} experiment reads a part this config has not"):
        run(name, DEFAULT)


@pytest.mark.slow  # shape-only passes of whole real models
@pytest.mark.parametrize("name, cfg", [("routing", DEEPSEEK_V2_LITE), ("routing", DEEPSEEK_V3),
                                       ("latent_cache", DEEPSEEK_V2_LITE),
                                       ("window_reach", MISTRAL_7B), ("head_parts", QWEN3_30B_A3B)])
def test_real_models_run_at_capped_sizes(name, cfg):
    ev = run(name, cfg)
    assert ev.values and (name not in ("routing", "head_parts") or "capped" in ev.note)


def test_routing_counts_are_the_passes():
    ev = run("routing", TINY_MOE)
    real = trace(TINY_MOE, shape_only=False)
    assert ev.values["counts"] == real.moe_counts()["tokens_per_expert"]
    assert [r["tokens"] for r in ev.records] == ev.values["counts"]


def test_the_reach_line_falls_one_window_a_layer():
    cfg = PART_CONFIGS["window, GPT"]  # M = 9, window 2, 3 layers: 7, 6, 5
    ev = run("window_reach", cfg)
    assert [r["earliest position reached"] for r in ev.records] == [7, 6, 5]
    assert ev.values["earliest"] == reach(cfg.M, [True] * cfg.layers, cfg.window) == 5


@pytest.mark.parametrize("name", list(PARTS))
def test_each_part_evidence_draws_a_chart(name):
    """What the quiz page draws under an answer: one chart each, from the evidence's own records."""
    from render.evidence import charts

    _, cfg = _configs(name)[0]
    drawn = charts(run(name, cfg))
    assert len(drawn) == 1 and drawn[0].to_dict()["data"]
