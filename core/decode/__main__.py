"""``python -m core.decode``: decode a prompt with one strategy on the shipped character LM, as text or JSON.

The JSON holds every step's recorded tensors with their shapes and ``"generated"``: the chosen continuation's
ids, one list per sequence. A bad value exits with status 2 and one line; the prompt is quoted escaped.
"""

from __future__ import annotations

import json
import sys

from ..cli import OneLineParser, run_main
from ..tokens import escaped
from .models import MODEL_NAMES, load
from .run import STRATEGIES, decode


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="python -m core.decode", description="Decode a prompt step by step and record every tensor.")
    p.add_argument("--strategy", choices=STRATEGIES, default="greedy")
    p.add_argument("--prompt", default="To be, or not to be", help="the text to continue")
    p.add_argument("--model", choices=list(MODEL_NAMES), default="char-lm",
                   help="char-lm: the shipped character LM; untrained: its layout with random weights; reversal: "
                        "the lab's reversal task (prompt: numbers 0-15 separated by spaces)")
    p.add_argument("--max-new-tokens", "--max_new_tokens", dest="G", type=int, default=20, help="G, new tokens")
    p.add_argument("--beams", type=int, default=4, help="B, beams (beam)")
    p.add_argument("--length-penalty", "--length_penalty", dest="length_penalty", type=float, default=1.0,
                   help="a finished hypothesis scores sum log p / length ** this (beam)")
    p.add_argument("--early-stopping", "--early_stopping", dest="early_stopping", choices=["false", "true", "never"],
                   default="false", help="when beam search stops taking hypotheses (beam)")
    p.add_argument("--temperature", type=float, default=1.0, help="(sample, mbr)")
    p.add_argument("--top-k", "--top_k", dest="top_k", type=int, help="keep the k most likely tokens (sample, mbr)")
    p.add_argument("--top-p", "--top_p", dest="top_p", type=float, default=1.0,
                   help="keep the most likely tokens holding this much probability (sample, mbr)")
    p.add_argument("--samples", type=int, default=8, help="S, samples MBR compares (mbr)")
    p.add_argument("--seed", type=int, default=0, help="the sampler's seed (sample, mbr)")
    p.add_argument("--stop-at-newline", "--stop_at_newline", dest="stop_at_newline", action="store_true",
                   help="treat the newline as the end token")
    p.add_argument("--json", action="store_true", help="print JSON with every step's tensors")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    stop = {"false": False, "true": True, "never": "never"}[args.early_stopping]
    try:
        if not 0 <= args.seed <= 2**31 - 1:
            raise ValueError(f"seed={args.seed} must be between 0 and {2**31 - 1}")
        dm = load(args.model)
        run = decode(dm, args.prompt, args.strategy, args.G, beams=args.beams, length_penalty=args.length_penalty,
                     early_stopping=stop, temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
                     samples=args.samples, seed=args.seed, stop_at_newline=args.stop_at_newline)
    except ValueError as exc:
        return parser.fail(escaped(str(exc)))
    d = run.decoding
    if args.json:
        out = d.to_dict() | {"model": dm.key, "prompt_text": run.prompt_text, "prompt_cut": run.prompt_cut,
                             "continuations": run.continuations,
                             "teacher_forcing": None if run.forced is None else run.forced.to_dict()}
        print(json.dumps(out))
    else:
        print(f"{args.strategy} on {dm.name}: {len(d.steps)} steps")
        for text in run.continuations:
            print(escaped(run.prompt_text) + " | " + escaped(text))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
