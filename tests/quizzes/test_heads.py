"""head_dim and qk_norm questions: counted on the model, shown only where the config sets them."""

import pytest

from core import DEFAULT, trace
from core.config import TINY_LLAMA, TINY_MLA, TINY_MOE
from core.model import Transformer
from quizzes import BY_ID, QUESTIONS, Context, questions_for

from .conftest import PART_CONFIGS

TOPIC = "Head width and qk_norm"


def test_the_topic_has_its_questions():
    qs = [q for q in QUESTIONS if q.topic == TOPIC]
    assert {q.id for q in qs} == {"hd-concat", "hd-wq", "qk-params", "qk-rms"}
    assert sum(q.parametric for q in qs) == 3


@pytest.mark.parametrize("cfg", [DEFAULT, TINY_LLAMA, TINY_MOE, TINY_MLA], ids=lambda c: f"{c.arch}-E{c.E}-seed{c.seed}")
def test_none_without_the_parts(cfg):
    assert not questions_for(TOPIC, cfg)


def test_each_question_needs_its_own_part():
    assert {q.id for q in questions_for(TOPIC, PART_CONFIGS["head_dim, encoder"])} == {"hd-concat", "hd-wq"}
    assert {q.id for q in questions_for(TOPIC, PART_CONFIGS["qk_norm, paper"])} == {"qk-params", "qk-rms"}
    assert len(questions_for(TOPIC, PART_CONFIGS["head_dim and qk_norm"])) == 4


@pytest.mark.parametrize("name", ["head_dim and qk_norm", "head_dim, encoder", "qk_norm, paper"])
def test_the_answers_are_the_models(name):
    cfg = PART_CONFIGS[name]
    ctx = Context(cfg)
    model = Transformer.from_config(cfg, device="meta")
    if BY_ID["hd-wq"].applies(cfg):
        attn = (model.decoder if model.encoder is None else model.encoder)[0].self_attn
        assert BY_ID["hd-wq"].expected(ctx) == attn.W_q.weight.numel() == cfg.E * cfg.nhead * cfg.d_k
        real = trace(cfg, shape_only=False)
        stack = "dec" if cfg.arch == "decoder-only" else "enc"
        assert BY_ID["hd-concat"].expected(ctx) == tuple(real.tensors[f"{stack}.0.self_attn.concat"].shape) == (
            cfg.N, cfg.M, cfg.nhead * cfg.d_k)
    if cfg.qk_norm:
        without = sum(p.numel() for p in Transformer.from_config(cfg.replace(qk_norm=False), device="meta").parameters())
        added = sum(p.numel() for p in model.parameters()) - without
        assert BY_ID["qk-params"].expected(ctx) == added
        blocks = 3 if cfg.arch == "encoder-decoder" else 1
        assert added == 2 * blocks * cfg.layers * cfg.d_k
        ev = ctx.evidence("head_parts").values
        assert ev["q_rms_spread"] < 1e-3 < ev["q_rms_spread_off"]
        assert BY_ID["qk-rms"].expected(ctx) == BY_ID["qk-rms"].choices[0]
