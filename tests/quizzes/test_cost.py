"""The Cost topic: its answers are core.cost's figures at the sidebar's config, and the checker takes the right
answer and refuses a wrong one."""

from __future__ import annotations

import pytest

from core import TransformerConfig
from core.config import LLAMA2_70B, REAL_MODELS
from core.cost import CostSettings, cost_report
from quizzes import QUESTIONS, Context
from quizzes.bank import BY_ID
from quizzes.check import mark

from .conftest import DECODER_A

COST = [q for q in QUESTIONS if q.topic == "Cost"]
CONFIGS = [TransformerConfig(), DECODER_A, LLAMA2_70B]


def test_the_topic_has_ten_questions_six_parametric():
    assert len(COST) >= 10 and sum(q.parametric for q in COST) >= 6
    assert not any(q.stored for q in COST)  # every answer is read off core.cost, none written in the bank


def test_numeric_answers_are_core_costs_figures():
    ctx = Context(LLAMA2_70B)
    r = cost_report(LLAMA2_70B, CostSettings(batch=1), live=False)
    long = cost_report(LLAMA2_70B, CostSettings(context=32_768, batch=8), live=False)
    assert BY_ID["cost-flops-token"].expected(ctx) == r.compute["FLOPs per token"].value == 148_163_788_800
    assert BY_ID["cost-chinchilla"].expected(ctx) == 20 * 68_976_648_192
    assert BY_ID["cost-6nd"].expected(ctx) == 6 * 68_976_648_192 * 20 * 68_976_648_192
    assert BY_ID["cost-adam-total"].expected(ctx) == 16 * 68_976_648_192
    assert BY_ID["cost-decode"].expected(ctx) == r.decode["decode bound"].value
    cache = long.inference["KV cache"].value
    assert BY_ID["cost-cache-long"].expected(ctx) == cache == 80 * 2 * 8 * 128 * 2 * 32_768 * 8
    assert BY_ID["cost-weights-cache"].expected(ctx) == "The weights"
    assert BY_ID["cost-weights-cache"].expected(Context(DECODER_A)) == "The KV cache"


def test_conceptual_answers_follow_the_figures():
    ctx = Context(TransformerConfig())
    assert BY_ID["cost-adam-bytes"].expected(ctx) == "16 bytes"
    assert BY_ID["cost-s2"].expected(ctx).startswith("The attention map, 5·a·s²·b")
    assert BY_ID["cost-flash"].expected(ctx).startswith("The 5·a·s/h term")
    moe = REAL_MODELS["Mixtral-8x7B"]
    r = cost_report(moe, live=False)
    assert r.params.active < r.params.total
    assert BY_ID["cost-moe-compute"].expected(ctx).startswith("The active parameters")
    assert BY_ID["cost-moe-memory"].expected(ctx).startswith("The total parameters")


@pytest.mark.parametrize("cfg", CONFIGS, ids=["paper", "Llama-like", "Llama-2-70B"])
def test_the_checker_takes_the_right_answer_and_refuses_a_wrong_one(cfg):
    ctx = Context(cfg)
    for q in COST:
        if not q.applies(cfg):
            continue
        right = q.expected(ctx)
        assert mark(q, ctx, right)[0], q.id
        if q.kind == "numeric":
            assert mark(q, ctx, f"{right:.6g}")[0], q.id  # as a learner writes it
            assert not mark(q, ctx, right * 1.1)[0], q.id
        else:
            wrong = next(c for c in q.choices if c != right)
            assert not mark(q, ctx, wrong)[0], q.id


def test_the_small_models_evidence_counts_its_own_pass():
    values = Context(DECODER_A).evidence("cost").values
    assert values["counted_flops"] == values["formula_flops"]
    assert "counted_flops" not in Context(LLAMA2_70B).evidence("cost").values  # large: formulas only
