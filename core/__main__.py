"""``python -m core``: the 14-row table of a live pass in a terminal, or as JSON.

Bad arguments exit with status 2 and one line that names the problem, never a traceback.
"""

from __future__ import annotations

import json
import sys

from .cli import OneLineParser, add_config_arguments, config_from, run_main
from .memory import human_bytes
from .trace import Trace, trace


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="python -m core", description="Trace one forward pass and print every tensor's shape.")
    add_config_arguments(p)
    p.add_argument("--shape-only", "--shape_only", dest="shape_only", action="store_true",
                   help="force a meta-device pass (no values)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return p


def format_table(t: Trace) -> str:
    """A plain-text table: index, name, formula, live shape, elements, memory."""
    head = ("#", "tensor", "formula", "live shape", "elements", "memory")
    body = [(str(r.index), r.name, r.formula, str(r.shape), f"{r.numel:,}", human_bytes(r.bytes)) for r in t.rows]
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    cfg = t.config
    title = ((f"arch={cfg.arch} " if cfg.arch != "encoder-decoder" else "")
             + f"N={cfg.N} M={cfg.M}" + (f" M_target={cfg.M_target}" if cfg.M_target is not None else "")
             + f" E={cfg.E} nhead={cfg.nhead}" + (f" nhead_kv={cfg.nhead_kv}" if cfg.nhead_kv != cfg.nhead else "")
             + f" d_k={cfg.d_k} d_ff={cfg.d_ff} vocab_size={cfg.vocab_size} layers={cfg.layers} "
             f"positional={cfg.positional}"
             + (f" max_len={cfg.max_len}" if cfg.positional == "learned" else "")
             + (" tie_embeddings" if cfg.tie_embeddings else "")
             + (" norm_first" if cfg.norm_first else "") + (f" norm={cfg.norm}" if cfg.norm != "layernorm" else "")
             + (f" activation={cfg.activation}" if cfg.activation != "relu" else "") + ("" if cfg.bias else " no bias"))
    if not t.shape_only:
        note = "live pass on CPU"
    elif t.estimate.over(t.budget_bytes):
        note = (f"shape-only pass on the meta device: a real one would need about {human_bytes(t.estimate.total)}, "
                f"over the memory budget of {human_bytes(t.budget_bytes)}")
    else:
        note = "shape-only pass on the meta device, as --shape-only asked"
    return f"{title}\n{note}; {t.params['total']:,} parameters\n\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = trace(config_from(args), shape_only=args.shape_only or None)
    except ValueError as exc:  # a bad value, or a learned table shorter than the sequences
        return parser.fail(str(exc))
    print(json.dumps(result.to_dict(), indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
