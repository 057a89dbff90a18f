"""The questions on the learner's own text: answers computed from the text in the quiz's Context, checked and
perturbed with a text there, and changing with the text."""

from __future__ import annotations

import re

import pytest

from core import TransformerConfig, trace
from core.config import GPT2_SMALL, GPT3, PAPER_BIG
from tests.support.configs import ENC_DEC_AT_GPT2_WIDTHS
from core.tokens import text_config, tokenize
from quizzes import Context, check, format_answer
from quizzes.check import mark
from quizzes.topics.your_text import (EXAMPLE, EXAMPLE_TEXT, QUESTIONS, TOPIC, capped, first_repeat, over_budget,
                                      text_trace)

from .test_bank import perturbed

CFG = TransformerConfig(N=2, M=8, E=16, nhead=2, vocab_size=100)
TEXT_A = tokenize("the cat sat on the mat", "word")
TEXT_B = tokenize("a rose is a rose is a rose\nso it is", "char")


def text_context(text) -> Context:
    """The quiz's Context as the app builds it with a text in the box: the config the text sizes, and the text."""
    return Context(text_config(CFG, text), text=text)


def test_at_least_eight_questions_on_your_text():
    assert len(QUESTIONS) >= 8 and all(q.topic == TOPIC for q in QUESTIONS)


@pytest.mark.parametrize("text", [TEXT_A, TEXT_B], ids=["words", "characters"])
@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_check_accepts_the_computed_answer_and_rejects_a_perturbed_one(q, text):
    ctx = text_context(text)
    expected = q.expected(ctx)
    assert check(q, expected, format_answer(q, expected))
    assert not check(q, expected, perturbed(q, expected))
    assert not check(q, expected, "")


def test_the_answers_are_the_text_s():
    ctx = text_context(TEXT_A)
    answers = {q.id: q.expected(ctx) for q in QUESTIONS}
    assert answers["yt-count-word"] == 11 and answers["yt-vocab-word"] == 7
    assert answers["yt-count-char"] == 22 and answers["yt-vocab-char"] == 11
    assert answers["yt-row1"] == (1, 11) and answers["yt-row14"] == (1, 11, 7)
    assert answers["yt-predict-row2"] == "the same numbers"  # "the" at 0 and 8: one row of the embedding
    assert answers["yt-predict-row5"] == "different numbers"  # their positions differ
    t = trace(text_config(CFG, TEXT_A), text=TEXT_A)
    last = t.tensors["enc.0.self_attn.weights"][0, 0, 10]  # (M,): the last token's row of head 0
    assert answers["yt-attends-most"] == int(last.argmax())


def test_without_positions_the_repeated_token_s_queries_are_the_same():
    ctx = Context(text_config(CFG.replace(positional="none"), TEXT_A), text=TEXT_A)
    assert next(q for q in QUESTIONS if q.id == "yt-predict-row5").expected(ctx) == "the same numbers"


def test_the_trained_map_is_the_anti_diagonal_and_the_answer_is_the_copied_symbol():
    from core.train import reversal_sequence
    from quizzes.topics.your_text import QUERY, REVERSAL, reversal_model, text_as_x

    ctx = text_context(TEXT_A)
    x = text_as_x(ctx)
    assert x == [i % 16 for i in TEXT_A.ids(TEXT_A.source[0])[:8]]
    t = reversal_model().trace(reversal_sequence(REVERSAL, x))
    peaks = t.tensors["dec.0.self_attn.weights"][0].mean(0).argmax(-1).tolist()  # (M,)
    assert peaks[8:] == [8, 7, 6, 5, 4, 3, 2, 1]  # the mirror half: the anti-diagonal
    assert next(q for q in QUESTIONS if q.id == "yt-trained-attends").expected(ctx) == x[16 - QUERY - 1]


@pytest.mark.parametrize("q", [q for q in QUESTIONS if q.id.startswith(("yt-count", "yt-vocab", "yt-row", "yt-trained"))],
                         ids=lambda q: q.id)
def test_the_answers_change_with_the_text(q):
    assert q.expected(text_context(TEXT_A)) != q.expected(text_context(TEXT_B))


def test_without_a_text_the_questions_use_the_example():
    ctx = Context(CFG)
    assert next(q for q in QUESTIONS if q.id == "yt-count-word").expected(ctx) == 11


def _q(qid: str):
    return next(q for q in QUESTIONS if q.id == qid)


@pytest.mark.parametrize("text", [tokenize("hi", "word"), tokenize("abc", "char")], ids=["hi", "abc"])
def test_a_first_line_with_no_repeated_token_asks_about_the_example_s(text):
    """The premise of the repeated-token questions fails on such a line: they ask about the example's first
    repeat instead, say so, and each answer agrees with its explanation (positions added: Q differs)."""
    ctx = text_context(text)
    assert _q("yt-predict-row2").expected(ctx) == "the same numbers"
    assert _q("yt-predict-row5").expected(ctx) == "different numbers"
    assert "repeats no token" in _q("yt-predict-row2").text(ctx) and EXAMPLE_TEXT in _q("yt-predict-row5").text(ctx)
    assert "repeats no token" not in _q("yt-predict-row2").text(text_context(TEXT_A))


def test_the_repeated_token_is_the_first_one_met_again_and_the_prompt_says_which():
    assert first_repeat(TEXT_A) == (1, 3)  # the space, met again at 3, before "the" is at 8
    assert "the space at position 3, met at 1" in _q("yt-predict-row2").text(text_context(TEXT_A))


@pytest.mark.parametrize("cfg", [GPT2_SMALL, ENC_DEC_AT_GPT2_WIDTHS, PAPER_BIG], ids=["GPT-2", "encoder-decoder at GPT-2 widths", "paper big"])
def test_where_the_text_s_pass_is_shape_only_its_questions_run_it_capped_and_say_so(cfg):
    ctx = Context(cfg)
    assert over_budget(cfg, EXAMPLE)
    assert _q("yt-predict-row2").expected(ctx) == "the same numbers"
    assert _q("yt-predict-row5").expected(ctx) == "different numbers"
    assert _q("yt-attends-most").expected(ctx) in range(11)
    t = text_trace(ctx)
    assert not t.shape_only and t.config == text_config(capped(cfg), EXAMPLE) and t.config.E == 64
    for qid in ("yt-predict-row2", "yt-predict-row5", "yt-attends-most"):
        assert "E ≤ 64" in _q(qid).text(ctx)
    assert "E ≤ 64" not in _q("yt-attends-most").text(text_context(TEXT_A))


def test_the_capped_pass_fits_the_budget_with_the_longest_text_at_the_largest_model():
    longest = tokenize("\n".join(" ".join(f"w{i}x{j}" for i in range(300)) for j in range(64)), "word")
    cfg = text_config(GPT3, longest)
    assert over_budget(cfg, longest)
    ctx = Context(cfg, text=longest)
    assert _q("yt-predict-row5").expected(ctx) == "different numbers"
    assert not text_trace(ctx).shape_only and text_trace(ctx).config.N == 1


def test_the_counts_count_the_whole_line_past_the_cut():
    line = "ab " * 300  # 900 characters, 600 word tokens: both over the 512 the model reads
    for level in ("char", "word"):
        ctx = text_context(tokenize(line, level))
        assert _q("yt-count-char").expected(ctx) == 900 and _q("yt-count-word").expected(ctx) == 600
        assert _q("yt-vocab-char").expected(ctx) == 4 and _q("yt-vocab-word").expected(ctx) == 3
    assert "whole line" in _q("yt-count-char").text(text_context(TEXT_A))


def test_without_a_text_the_last_row_s_prompt_names_the_sizes_its_answer_has():
    ctx = Context(CFG)
    assert _q("yt-row14").expected(ctx) == (2, 8, 100)  # the sidebar's N, M_target and vocab_size
    assert "without one, the sidebar's sizes" in _q("yt-row14").text(ctx)


def test_without_positions_the_prompts_name_the_rows_by_what_they_are():
    """The positional row goes, and the rows after it move up: Q of one head is no longer row 5."""
    ctx = Context(text_config(CFG.replace(positional="none"), TEXT_A), text=TEXT_A)
    for qid in ("yt-predict-row5", "yt-row14"):
        assert not re.search(r"row (5|14)\b", _q(qid).text(ctx)), qid
    assert "Q of one head" in _q("yt-predict-row5").text(ctx) and "last row" in _q("yt-row14").text(ctx)


def test_every_position_sharing_the_largest_weight_is_right():
    """With no positions, copies of one token get exactly the same weight: "the" at 0, 8 and 12 here."""
    text = tokenize("the cat sat on the mat the", "word")
    ctx = Context(text_config(CFG.replace(positional="none", seed=3), text), text=text)
    q = _q("yt-attends-most")
    for reply in ("0", "8", "12"):
        assert mark(q, ctx, reply) == (True, int(reply))
    assert not mark(q, ctx, "1")[0] and not mark(q, ctx, "4")[0]
    assert q.expected(ctx) == 0 and q.ties(ctx) == (0, 8, 12)


def test_the_answer_key_names_every_tied_answer():
    from quizzes.bank import answer_key

    text = tokenize("the cat sat on the mat the", "word")
    cfg = text_config(CFG.replace(positional="none", seed=3), text)
    key = {q["id"]: q for q in answer_key(cfg, Context(cfg, text=text))["questions"]}
    assert key["yt-attends-most"]["answer_text"] == "0 (or 8, 12, just as right)"
    assert key["yt-attends-most"]["answer"] == 0
