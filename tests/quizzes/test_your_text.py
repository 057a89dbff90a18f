"""The questions on the learner's own text: answers computed from the text in the quiz's Context, checked and
perturbed with a text there, and changing with the text."""

from __future__ import annotations

import pytest

from core import TransformerConfig, trace
from core.tokens import text_config, tokenize
from quizzes import Context, check, format_answer
from quizzes.topics.your_text import QUESTIONS, TOPIC

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
