"""Latent-attention questions: the cache a real generation keeps, the K and V the heads are made back to, DeepSeek-V3's
figures, and that they are asked only of a latent-attention model."""

import pytest
import torch

from core import DEFAULT, trace
from core.config import DEEPSEEK_V3, TINY_LLAMA, TINY_MLA, TINY_MOE
from core.memory import kv_cache_per_token, kv_numbers_per_token
from core.model import Transformer, generate_square_subsequent_mask
from quizzes import BY_ID, QUESTIONS, Context, answer_key, check, questions_for

from .conftest import PART_CONFIGS

TOPIC = "Latent attention (MLA)"
MLA = {n: c for n, c in PART_CONFIGS.items() if c.attention == "mla"}


def test_the_topic_has_its_questions():
    qs = [q for q in QUESTIONS if q.topic == TOPIC]
    assert {q.id for q in qs} == {"mla-cache-layer", "mla-cache-token", "mla-made-back", "mla-gqa-groups",
                                  "mla-v3-cache", "mla-rope-key-shape", "mla-rope-widths", "mla-why-shared"}
    assert sum(q.parametric for q in qs) == 5


@pytest.mark.parametrize("cfg", [DEFAULT, TINY_LLAMA, TINY_MOE, PART_CONFIGS["window"]], ids=lambda c: f"{c.arch}-E{c.E}-seed{c.seed}")
def test_no_latent_question_without_latent_attention(cfg):
    assert not questions_for(TOPIC, cfg)


def test_a_latent_model_is_asked_its_own_questions_and_no_multi_head_one():
    """The older questions read multi-head attention's per-head W^Q, W^K and W^V: a latent model gets none of
    them (the questions on the learner's text read rows every attention has), and its answer key computes every
    question it shows."""
    shown = questions_for(None, TINY_MLA)
    assert {q.topic for q in shown} == {TOPIC, "Your text"}
    assert [q["id"] for q in answer_key(TINY_MLA)["questions"]] == [q.id for q in shown]
    with_experts = {q.topic for q in questions_for(None, MLA["MLA with experts"])}
    assert with_experts == {TOPIC, "Mixture of experts", "Your text"}


@pytest.mark.parametrize("cfg", list(MLA.values()), ids=list(MLA))
def test_the_cache_is_what_a_generation_keeps(cfg):
    """Run the prompt through the real model with a cache: each layer keeps the latent and the rotary key, and the
    answers count exactly those; the made-back K and V are the shapes the pass computes."""
    ctx = Context(cfg)
    torch.manual_seed(cfg.seed)
    model = Transformer.from_config(cfg)
    cache = [{} for _ in range(cfg.layers)]
    ids = torch.randint(2, cfg.vocab_size, (cfg.N, cfg.M))
    with torch.no_grad():
        model(None, ids, tgt_mask=generate_square_subsequent_mask(cfg.M), cache=cache)
    per_layer = {c["latent"].shape[-1] + c["k_rope"].shape[-1] for c in cache}
    assert per_layer == {BY_ID["mla-cache-layer"].expected(ctx)} == {kv_numbers_per_token(cfg)}
    assert BY_ID["mla-cache-token"].expected(ctx) == cfg.layers * (cfg.kv_lora_rank + cfg.rope_head_dim)
    assert BY_ID["mla-made-back"].expected(ctx) == kv_numbers_per_token(cfg, nhead_kv=cfg.nhead) == cfg.nhead * (
        cfg.nope_head_dim + cfg.rope_head_dim + cfg.v_head_dim)
    assert BY_ID["mla-gqa-groups"].expected(ctx) == pytest.approx((cfg.kv_lora_rank + cfg.rope_head_dim)
                                                                  / (2 * cfg.v_head_dim))
    real = trace(cfg, shape_only=False)
    assert BY_ID["mla-rope-key-shape"].expected(ctx) == tuple(real.tensors["dec.0.self_attn.k_rope"].shape)


@pytest.mark.slow  # a shape-only pass of all 61 layers and 256 experts a layer
def test_deepseek_v3_figures():
    """35,136 numbers a token; 57 times fewer than the DeepSeek-V2 paper's count of multi-head attention, about 71
    times fewer than the K and V the heads are made back to; read off a shape-only pass of the whole model."""
    ctx = Context(DEEPSEEK_V3, trace=trace(DEEPSEEK_V3, shape_only=True))
    q = BY_ID["mla-v3-cache"]
    assert q.expected(Context(TINY_MLA)) == 35_136 == 576 * 61 == kv_cache_per_token(DEEPSEEK_V3, bytes_per_number=1)
    assert check(q, 35_136, "35,136") and check(q, 35_136, "(512 + 64)*61", q.reading_symbols(Context(TINY_MLA)))
    assert BY_ID["mla-cache-token"].expected(ctx) == 35_136
    assert BY_ID["mla-made-back"].expected(ctx) == 40_960 and round(40_960 / 576) == 71
    paper = 2 * 128 * 128 * 61
    assert paper == 1_998_848 and round(paper / 35_136) == 57
    for text in ("1,998,848", "57 times", "2,498,560"):
        assert text in q.explanation
    assert "about 71 times" in BY_ID["mla-made-back"].explanation
    assert BY_ID["mla-gqa-groups"].expected(ctx) == pytest.approx(2.25)


def test_the_rotary_key_is_one_for_every_head():
    """What the two conceptual questions say, on the live model: the key's rotary part is the same in every head, its
    plain part is not."""
    cfg = TINY_MLA
    real = trace(cfg, shape_only=False)
    k = real.tensors["dec.0.self_attn.k"]  # (N, nhead, M, d_qk)
    rope = k[..., cfg.nope_head_dim:]
    assert torch.equal(rope[:, 0], rope[:, 1])
    assert not torch.equal(k[:, 0, :, :cfg.nope_head_dim], k[:, 1, :, :cfg.nope_head_dim])
    for qid in ("mla-rope-widths", "mla-why-shared"):
        q = BY_ID[qid]
        assert q.stored and q.expected(Context(cfg)) == q.choices[0]
