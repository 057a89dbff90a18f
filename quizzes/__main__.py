"""Answer key CLI: every question's expected answer, computed from the live model for one config.

    python -m quizzes --N 2 --M 8 --E 16 --nhead 2 --vocab-size 100 --json

Bad arguments print one line to stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from core import TransformerConfig

from .bank import answer_key
from .check import shown_formula


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not argparse's usage block
        print(f"python -m quizzes: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m quizzes", description="Print the quiz answer key for one config.")
    p.add_argument("--N", type=int, default=2, help="batch size")
    p.add_argument("--M", type=int, default=8, help="source length")
    p.add_argument("--M-target", "--M_target", dest="M_target", type=int, default=None, help="target length")
    p.add_argument("--E", type=int, default=16, help="embedding size (d_model)")
    p.add_argument("--nhead", type=int, default=2, help="attention heads")
    p.add_argument("--vocab-size", "--vocab_size", dest="vocab_size", type=int, default=100)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--d-ff", "--d_ff", dest="d_ff", type=int, default=None)
    p.add_argument("--positional", choices=("sinusoidal", "learned"), default="sinusoidal")
    p.add_argument("--max-len", "--max_len", dest="max_len", type=int, default=None,
                   help="rows of a learned positional table (default: the longer of M and M_target)")
    p.add_argument("--tie-embeddings", "--tie_embeddings", dest="tie_embeddings", action="store_true",
                   help="one matrix for both embeddings and the output layer")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cfg = TransformerConfig(N=args.N, M=args.M, M_target=args.M_target, E=args.E, nhead=args.nhead,
                                vocab_size=args.vocab_size, layers=args.layers, d_ff=args.d_ff,
                                positional=args.positional, max_len=args.max_len,
                                tie_embeddings=args.tie_embeddings)
    except ValueError as exc:
        parser.error(str(exc).replace("\n", " "))
    key = answer_key(cfg)
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
    raise SystemExit(main())
