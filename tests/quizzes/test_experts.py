"""Mixture-of-experts questions: each answer against the model itself, at several configs and seeds, and shown only
where the config has experts."""

import math

import pytest

from core import DEFAULT, trace
from core.config import TINY_BERT, TINY_GPT, TINY_LLAMA, TINY_MLA, TINY_MOE
from core.experts import Experts
from core.memory import active_params, moe_params
from core.model import Transformer
from quizzes import BY_ID, QUESTIONS, Context, check, questions_for
from quizzes.experiments.parts import CAPACITY_FACTOR

from .conftest import PART_CONFIGS

TOPIC = "Mixture of experts"
MOE = [c for c in PART_CONFIGS.values() if c.moe]
IDS = [n for n, c in PART_CONFIGS.items() if c.moe]
SEEDED = [TINY_MOE.replace(seed=s) for s in (0, 1, 7)]


def topic_questions():
    return [q for q in QUESTIONS if q.topic == TOPIC]


def test_the_topic_has_its_questions():
    ids = {q.id for q in topic_questions()}
    assert ids == {"moe-router-shape", "moe-top-k-shape", "moe-active", "moe-experts-params", "moe-slots",
                   "moe-no-fixed-shape", "moe-capacity", "moe-capacity-rows", "moe-shared-params", "moe-shared-output"}
    assert sum(q.parametric for q in topic_questions()) == 8


@pytest.mark.parametrize("cfg", [DEFAULT, TINY_LLAMA, TINY_GPT, TINY_BERT, TINY_MLA], ids=lambda c: f"{c.arch}-E{c.E}-seed{c.seed}")
def test_no_expert_question_without_experts(cfg):
    assert not [q.id for q in questions_for(TOPIC, cfg)]


def test_shared_expert_questions_only_with_shared_experts():
    without = PART_CONFIGS["MoE, GELU, biases"]
    shown = {q.id for q in questions_for(TOPIC, without)}
    assert "moe-router-shape" in shown and not shown & {"moe-shared-params", "moe-shared-output"}
    assert {"moe-shared-params", "moe-shared-output"} <= {q.id for q in questions_for(TOPIC, TINY_MOE)}


def _model(cfg):
    torch_model = Transformer.from_config(cfg, device="meta")
    return [m for m in torch_model.modules() if isinstance(m, Experts)], torch_model


@pytest.mark.parametrize("cfg", MOE + SEEDED, ids=IDS + [f"Tiny MoE seed {c.seed}" for c in SEEDED])
def test_every_answer_is_the_models(cfg):
    """Counted on the modules built on the meta device, and against core.memory's formulas; shapes against a real
    pass's tensors."""
    ctx = Context(cfg)
    layers, model = _model(cfg)
    assert len(layers) == cfg.layers - cfg.first_dense_layers
    experts = sum(p.numel() for m in layers for p in m.experts.parameters())
    skipped = sum(p[cfg.top_k:].numel() for m in layers for p in m.experts.parameters())
    total = sum(p.numel() for p in model.parameters())
    assert BY_ID["moe-experts-params"].expected(ctx) == experts == moe_params(cfg)["experts"]
    assert BY_ID["moe-active"].expected(ctx) == total - skipped == active_params(cfg)
    real = trace(cfg, shape_only=False)
    hook = f"{'dec' if cfg.arch == 'decoder-only' else 'enc'}.{cfg.first_dense_layers}.ffn."
    assert BY_ID["moe-router-shape"].expected(ctx) == tuple(real.tensors[hook + "router_logits"].shape) == (
        cfg.N, cfg.M, cfg.n_experts)
    assert BY_ID["moe-top-k-shape"].expected(ctx) == (cfg.N, cfg.M, cfg.top_k)
    # The choices the router made fill exactly N·M·top_k rows, however unevenly the experts share them.
    assert BY_ID["moe-slots"].expected(ctx) == int(real.tensors[hook + "tokens_per_expert"].sum())
    assert BY_ID["moe-capacity-rows"].expected(ctx) == math.ceil(CAPACITY_FACTOR * cfg.N * cfg.M * cfg.top_k
                                                                 / cfg.n_experts)
    if cfg.n_shared_experts:
        shared = sum(p.numel() for m in layers for p in m.shared.parameters())
        assert BY_ID["moe-shared-params"].expected(ctx) == shared == moe_params(cfg)["shared experts"]
        assert BY_ID["moe-shared-output"].expected(ctx) == tuple(real.tensors[hook + "shared.out"].shape)


def test_tokens_per_expert_change_with_the_seed_and_the_even_share_does_not():
    """What moe-no-fixed-shape says: the counts are the data's, so seeded passes differ; the slots do not."""
    counts = {tuple(Context(c).evidence("routing").values["counts"]) for c in SEEDED}
    assert len(counts) > 1
    assert {sum(c) for c in counts} == {TINY_MOE.N * TINY_MOE.M * TINY_MOE.top_k}
    q = BY_ID["moe-no-fixed-shape"]
    assert q.stored and q.expected(Context(TINY_MOE)).startswith("The router decides it from the data")


def test_the_routing_evidence_drops_what_the_capacity_caps():
    values = Context(TINY_MOE).evidence("routing").values
    cap = values["capacity"]
    assert values["dropped"] == sum(max(0, c - cap) for c in values["counts"])
    assert values["busiest"] == max(values["counts"])


def test_mixtral_numbers_in_the_explanation_are_the_models():
    from core.config import MIXTRAL_8X7B
    from core.memory import param_counts

    assert round(param_counts(MIXTRAL_8X7B)["total"] / 1e9, 1) == 46.7 and "46.7B" in BY_ID["moe-active"].explanation
    assert round(active_params(MIXTRAL_8X7B) / 1e9, 1) == 12.9 and "12.9B" in BY_ID["moe-active"].explanation


def test_a_reply_in_symbols_is_held_to_the_formula():
    q, ctx = BY_ID["moe-experts-params"], Context(TINY_MOE)
    expected, formula = q.expected(ctx), q.formula(ctx)
    assert check(q, expected, "(layers - first_dense_layers)*n_experts*3*E*d_ff_expert", ctx.symbols, formula)
    # Equal here (layers − first_dense_layers = 2 = top_k), but it counts a token's experts, not the model's.
    assert not check(q, expected, "top_k*n_experts*3*E*d_ff_expert", ctx.symbols, formula)
    router = BY_ID["moe-router-shape"]
    assert check(router, router.expected(ctx), "(N, M, n_experts)", ctx.symbols, router.formula(ctx))
    assert not check(router, router.expected(ctx), "(N, M, E/2)", ctx.symbols, router.formula(ctx))
