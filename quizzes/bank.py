"""The whole question bank: every topic module's questions, in topic order, and the answer key."""

from __future__ import annotations

from typing import Any

from core import TransformerConfig

from .check import format_answer, to_json_value
from .questions import Context, Question
from .topics import dk, ffn, masking, params, positional, qkv, rnn, shapes, shifted, skip

_MODULES = (rnn, skip, dk, qkv, ffn, positional, masking, shifted, params, shapes)
TOPICS: tuple[str, ...] = tuple(m.TOPIC for m in _MODULES)
QUESTIONS: tuple[Question, ...] = tuple(q for m in _MODULES for q in m.QUESTIONS)
BY_ID: dict[str, Question] = {q.id: q for q in QUESTIONS}

if len(BY_ID) != len(QUESTIONS):  # a duplicated id would make progress ambiguous
    raise RuntimeError("question ids must be unique")


def questions_for(topic: str | None = None) -> list[Question]:
    """The questions of one topic, or all of them for None."""
    return [q for q in QUESTIONS if topic is None or q.topic == topic]


def answer_key(cfg: TransformerConfig, ctx: Context | None = None) -> dict[str, Any]:
    """Every question with its expected answer for ``cfg``, as plain JSON values, and the answer's
    formula in symbols where it has one ('(N, M, E)', '4*E^2 + 4*E'): a teacher marking by hand
    needs the formula as much as the number, since a reply in other symbols can match the number."""
    ctx = ctx or Context(cfg)
    return {
        "config": cfg.to_dict(),
        "questions": [
            {"id": q.id, "topic": q.topic, "kind": q.kind, "prompt": q.text(ctx),
             "answer": to_json_value(q, q.expected(ctx)), "answer_text": format_answer(q, q.expected(ctx)),
             "formula": q.formula(ctx), "parametric": q.parametric,
             **({"choices": list(q.choices)} if q.choices else {})}
            for q in QUESTIONS
        ],
    }
