"""The T5 questions: shown for relative-position models only, their answers read off the live model, and the
checker takes the right answer and refuses a wrong one."""

import pytest

from core import Transformer, TransformerConfig
from quizzes import Context
from quizzes.bank import BY_ID, questions_for
from quizzes.check import check, format_answer
from quizzes.topics.t5 import TOPIC

from .conftest import CONFIG_A, DECODER_A, T5_A, T5_B, context

IDS = ("t5-no-scale", "t5-bias-params", "t5-shared-embedding", "t5-shared-bucket", "t5-buckets-used")


def marks(q, ctx: Context, given) -> bool:
    return check(q, q.expected(ctx), given, q.reading_symbols(ctx), q.formula(ctx))


def test_the_questions_are_asked_of_relative_position_models_only():
    assert [q.id for q in questions_for(TOPIC)] == list(IDS)
    assert [q.id for q in questions_for(TOPIC, T5_A)] == list(IDS)
    assert questions_for(TOPIC, CONFIG_A) == [] and questions_for(TOPIC, DECODER_A) == []
    one_stack = DECODER_A.replace(positional="relative")
    assert [q.id for q in questions_for(TOPIC, one_stack)] == ["t5-no-scale", "t5-bias-params"]
    assert sum(BY_ID[i].parametric for i in IDS) == 4


def test_no_scale_the_folded_model_gives_the_same_logits():
    q, ctx = BY_ID["t5-no-scale"], context(T5_A)
    values = ctx.evidence("relative_probe").values
    assert values["folded_difference"] <= 1e-5 < values["unscaled_difference"]
    assert q.expected(ctx) == q.choices[0]
    assert marks(q, ctx, "a") and not marks(q, ctx, "b") and not marks(q, ctx, "c")


@pytest.mark.parametrize("cfg", [T5_A, T5_B])
def test_bias_parameters_are_two_tables_of_buckets_by_heads(cfg):
    q, ctx = BY_ID["t5-bias-params"], context(cfg)
    live = sum(p.numel() for p in Transformer.from_config(cfg).parameters()) - sum(
        p.numel() for p in Transformer.from_config(cfg.replace(positional="none")).parameters())
    assert q.expected(ctx) == live == 2 * cfg.relative_buckets * cfg.nhead
    assert marks(q, ctx, str(live)) and marks(q, ctx, "2*relative_buckets*nhead")
    assert not marks(q, ctx, str(live + 1)) and not marks(q, ctx, "relative_buckets*nhead")
    assert not marks(q, ctx, "2*relative_buckets*nhead*layers")  # one table per stack, not one per layer


def test_a_single_stack_has_one_table():
    cfg = DECODER_A.replace(positional="relative", relative_buckets=12, relative_max_distance=40)
    q, ctx = BY_ID["t5-bias-params"], Context(cfg)
    assert q.expected(ctx) == 12 * cfg.nhead and q.formula(ctx) == "relative_buckets*nhead"
    assert marks(q, ctx, "relative_buckets*nhead") and not marks(q, ctx, "2*relative_buckets*nhead")


@pytest.mark.parametrize("cfg", [T5_A, T5_B, T5_B.replace(tie_embeddings=False, vocab_size=77)])
def test_the_shared_embedding_saves_two_matrices(cfg):
    q, ctx = BY_ID["t5-shared-embedding"], Context(cfg)
    tied, untied = (sum(p.numel() for p in Transformer.from_config(cfg.replace(tie_embeddings=t)).parameters())
                    for t in (True, False))
    assert q.expected(ctx) == untied - tied == 2 * cfg.vocab_size * cfg.E
    assert marks(q, ctx, format_answer(q, q.expected(ctx))) and marks(q, ctx, "2*vocab_size*E")
    assert not marks(q, ctx, "vocab_size*E") and not marks(q, ctx, str(cfg.vocab_size * cfg.E))


def test_which_pairs_share_a_bucket_follows_the_live_table():
    """At T5_A (8 buckets, M = 8) far offsets share buckets; at T5_B (32 buckets, M = 6) each has its own."""
    q = BY_ID["t5-shared-bucket"]
    merged, own = context(T5_A), context(T5_B)
    assert q.expected(merged) == q.choices[1] and q.expected(own) == q.choices[0]
    assert marks(q, merged, "b") and not marks(q, merged, "a") and not marks(q, merged, "c")
    assert marks(q, own, "a") and not marks(q, own, "b") and not marks(q, own, "d")
    model = Transformer.from_config(T5_A)
    buckets = model.encoder[0].relative(T5_A.M, T5_A.M)  # (nhead, M, M): read the buckets the live table gave
    rec: dict = {}
    model.encoder[0].relative(T5_A.M, T5_A.M, rec=rec)
    table = rec["relative_buckets"]  # (M, M)
    assert buckets.shape == (T5_A.nhead, T5_A.M, T5_A.M)
    assert table[0, 6] == table[0, 7] and table[6, 0] == table[7, 0]  # distances 6 and 7 share, both ways
    assert table[0, 1] != table[1, 0]  # a key after the query and one before never share
    assert len(table.unique()) == merged.value("relative_probe", "buckets_used")


def test_the_buckets_used_are_the_live_tables_distinct_values():
    q = BY_ID["t5-buckets-used"]
    for cfg in (T5_A, T5_B, T5_B.replace(M=40, M_target=None)):
        ctx = Context(cfg)
        rec: dict = {}
        Transformer.from_config(cfg).encoder[0].relative(cfg.M, cfg.M, rec=rec)
        used = len(rec["relative_buckets"].unique())
        assert q.expected(ctx) == used
        assert marks(q, ctx, str(used)) and not marks(q, ctx, str(used + 1))
    assert Context(T5_A).symbols["relative_buckets"] == 8
