"""``python -m core``: the 14-row table of a live pass in a terminal, or as JSON.

Bad arguments exit with status 2 and one line that names the problem, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys

from .config import POSITIONAL_KINDS, TransformerConfig
from .memory import human_bytes
from .trace import Trace, trace


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other bad value
        self.exit(2, f"error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m core", description="Trace one forward pass and print every tensor's shape.")
    p.add_argument("--N", type=int, default=2, help="batch size")
    p.add_argument("--M", type=int, default=8, help="source length")
    p.add_argument("--E", type=int, default=16, help="embedding size (d_model)")
    p.add_argument("--nhead", type=int, default=2, help="attention heads; must divide E")
    p.add_argument("--vocab-size", dest="vocab_size", type=int, default=100, help="vocabulary size")
    p.add_argument("--M-target", dest="M_target", type=int, default=None, help="target length (default M)")
    p.add_argument("--layers", type=int, default=2, help="encoder layers and decoder layers, each")
    p.add_argument("--d-ff", dest="d_ff", type=int, default=None, help="FFN hidden width (default 4E)")
    p.add_argument("--positional", choices=POSITIONAL_KINDS, default="sinusoidal")
    p.add_argument("--tie-embeddings", action="store_true", help="share embedding and output weights")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--shape-only", action="store_true", help="force a meta-device pass (no values)")
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
    title = (f"N={cfg.N} M={cfg.M} M_target={cfg.M_target} E={cfg.E} nhead={cfg.nhead} d_k={cfg.d_k} "
             f"d_ff={cfg.d_ff} vocab_size={cfg.vocab_size} layers={cfg.layers}")
    note = "shape-only pass on the meta device (over the memory budget)" if t.shape_only else "live pass on CPU"
    return f"{title}\n{note}; {t.params['total']:,} parameters\n\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    values = vars(args)
    shape_only = values.pop("shape_only") or None
    as_json = values.pop("json")
    try:
        cfg = TransformerConfig(**values)
        result = trace(cfg, shape_only=shape_only)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result.to_dict(), indent=2) if as_json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
