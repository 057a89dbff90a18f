"""Answer key CLI: every question's expected answer, computed from the live model for one config.

    python -m quizzes --N 2 --M 8 --E 16 --nhead 2 --vocab-size 100 --json

Bad arguments print one line to stderr and exit with status 2.
"""

from __future__ import annotations

import json

from core.cli import OneLineParser, add_config_arguments, config_from, run_main

from .bank import answer_key
from .check import shown_formula


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="python -m quizzes", description="Print the quiz answer key for one config.")
    add_config_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        key = answer_key(config_from(args))
    except ValueError as exc:  # a bad value, or a learned table shorter than the sequences
        return parser.fail(str(exc))
    if args.json:
        questions = [{k: q[k] for k in ("id", "topic", "kind", "prompt", "answer", "formula")}
                     for q in key["questions"]]
        print(json.dumps({"config": key["config"], "questions": questions}, ensure_ascii=False))
        return 0
    for q in key["questions"]:
        formula = shown_formula(q["formula"], q["answer_text"])
        formula = f"   that is {formula}" if formula else ""
        print(f"[{q['topic']}] {q['id']} ({q['kind']})\n  {q['prompt']}\n  -> {q['answer_text']}{formula}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
