"""The whole question bank: every topic module's questions, in topic order, and the answer key."""

from __future__ import annotations

import csv
import io
from typing import Any

from core import TransformerConfig
from core.config import file_name_sizes

from .check import format_answer, shown_formula, to_json_value
from .questions import Context, Question
from .topics import (cost, decoding, dk, experts, families, ffn, gqa, heads, kv_cache, latent, masking, norms, params,
                     positional, qkv, rnn, rope, shapes, shifted, skip, swiglu, t5, window, your_text)

_MODULES = (
    rnn, skip, dk, qkv, ffn, positional, masking, shifted, params, shapes,
    families, gqa, kv_cache, rope, t5, norms, swiglu, cost, your_text, decoding,
    experts, latent, window, heads,
)
TOPICS: tuple[str, ...] = tuple(m.TOPIC for m in _MODULES)
QUESTIONS: tuple[Question, ...] = tuple(q for m in _MODULES for q in m.QUESTIONS)
BY_ID: dict[str, Question] = {q.id: q for q in QUESTIONS}

if len(BY_ID) != len(QUESTIONS):  # a duplicated id would make progress ambiguous
    raise RuntimeError("question ids must be unique")


def questions_for(topic: str | None = None, cfg: TransformerConfig | None = None) -> list[Question]:
    """The questions of one topic, or all of them for None; with ``cfg``, only those that apply to its model."""
    return [q for q in QUESTIONS if (topic is None or q.topic == topic) and (cfg is None or q.applies(cfg))]


def applying_text(cfg: TransformerConfig) -> str:
    """How many questions the config's model has, in words: '40 of 100 questions apply to decoder-only.'"""
    applying = questions_for(None, cfg)
    noun = "question applies" if len(applying) == 1 else "questions apply"
    return f"{len(applying)} of {len(QUESTIONS)} {noun} to {cfg.arch}."


def other_parts_text(cfg: TransformerConfig) -> str:
    """How many of the family's questions ask about parts this model has not (a question on ReLU leaves a
    SwiGLU model out), and how to reach them; '' when there are none."""
    others = [q for q in QUESTIONS if cfg.arch in q.families and not q.applies(cfg)]
    if not others:
        return ""
    noun = "question asks" if len(others) == 1 else "questions ask"
    return (f"{len(others)} more of the {cfg.arch} family's {noun} about parts this model does not have; "
            "switch them in the sidebar's Architecture group to see them.")


def answer_key(cfg: TransformerConfig, ctx: Context | None = None) -> dict[str, Any]:
    """Every question that applies to ``cfg`` with its expected answer there, as plain JSON values, and the
    answer's formula in symbols where it has one ('(N, M, E)', '4*E^2 + 4*E'): a teacher marking by hand
    needs the formula as much as the number, since a reply in other symbols can match the number."""
    ctx = ctx or Context(cfg)
    return {
        "config": cfg.to_dict(),
        "questions": [
            {"id": q.id, "topic": q.topic, "kind": q.kind, "prompt": q.text(ctx),
             "answer": to_json_value(q, q.expected(ctx)), "answer_text": answer_text(q, ctx),
             "formula": q.formula(ctx), "parametric": q.parametric,
             **({"choices": list(q.choices)} if q.choices else {})}
            for q in questions_for(None, cfg)
        ],
    }


def answer_text(q: Question, ctx: Context) -> str:
    """The expected answer as a learner would type it, and the others just as right where the run has ties
    ('0 (or 8, 12, just as right)'): a teacher marking by hand accepts what the quiz accepts."""
    expected = q.expected(ctx)
    ties = [t for t in q.ties(ctx) if t != expected] if q.ties is not None else []
    more = f" (or {', '.join(format_answer(q, t) for t in ties)}, just as right)" if ties else ""
    return format_answer(q, expected) + more


KEY_COLUMNS = ("Q", "topic", "Q in topic", "id", "kind", "question", "choices", "answer", "formula")


def key_rows(key: dict[str, Any]) -> list[dict[str, str]]:
    """An answer key (``answer_key``) as rows of text for a table or a spreadsheet: choices lettered
    as the quiz letters them ('A) ...'), the answer as a learner would type it (a choice with its
    letter), and the formula left empty where there is none or where it would only repeat the answer.

    Each row has the numbers the quiz shows over its question, 'Q7': with all topics and no
    shuffle ("Q"), and with its topic chosen ("Q in topic", as the heading reads: 'Q2 · Masking'). A
    learner names a question by that number, never by its id, which the quiz does not show."""
    rows = []
    in_topic: dict[str, int] = {}
    for number, q in enumerate(key["questions"], start=1):
        in_topic[q["topic"]] = in_topic.get(q["topic"], 0) + 1
        choices = " / ".join(f"{chr(ord('A') + i)}) {c}" for i, c in enumerate(q.get("choices", ())))
        formula = shown_formula(q["formula"], q["answer_text"]) or ""
        answer = q["answer_text"]
        if answer in q.get("choices", ()):
            answer = f"{chr(ord('A') + q['choices'].index(answer))}) {answer}"
        heading = f"Q{in_topic[q['topic']]} · {q['topic']}"
        rows.append({"Q": f"Q{number}", "topic": q["topic"], "Q in topic": heading, "id": q["id"], "kind": q["kind"],
                     "question": q["prompt"], "choices": choices, "answer": answer, "formula": formula})
    return rows


def key_csv(key: dict[str, Any]) -> str:
    """An answer key as CSV, one question a line (``key_file_name`` says which config it holds for)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=KEY_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(key_rows(key))
    return out.getvalue()


def key_file_name(cfg: TransformerConfig) -> str:
    """A name that says which config a downloaded key holds for, since the answers hold only there."""
    tied = "_tied" if cfg.tie_embeddings else ""
    return f"quiz-answer-key_{file_name_sizes(cfg)}_{cfg.positional}{cfg.max_len}{tied}.csv"
