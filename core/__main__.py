"""``python -m core``: the 14-row table of a live pass in a terminal, or as JSON.

``--text`` runs the pass on a learner's own text instead of random ids; the text then sets N, M, M_target
and vocab_size. Bad arguments exit with status 2 and one line that names the problem, never a traceback.
"""

from __future__ import annotations

import json
import sys

from .cli import OneLineParser, add_config_arguments, add_cost_arguments, config_from, cost_settings_from, run_main
from .cost import CostReport, cost_report
from .memory import human_bytes
from .tokens import LEVELS, MAX_LINES, MAX_TOKENS, START_TOKEN, TokenizedText, escaped, text_config, tokenize
from .trace import Trace, trace
from .values import axes, value_slice

# The sizes a text sets: giving one of them beside --text would say two things at once.
TEXT_SIZES = ("N", "M", "M_target", "vocab_size", "max_len")


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="python -m core", description="Trace one forward pass and print every tensor's shape.")
    add_config_arguments(p)
    p.add_argument("--shape-only", "--shape_only", dest="shape_only", action="store_true",
                   help="force a meta-device pass (no values)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--values", action="store_true",
                   help="the values too: with --json, of every tensor of at most 4,096 elements; in the table, "
                   "each row's first 16 x 16 (batch item 0, head 0)")
    p.add_argument("--text", help="trace this text instead of random ids: one sequence per line; it sets N, M, "
                   f"M_target and vocab_size (at most {MAX_TOKENS} tokens a line, {MAX_LINES} lines)")
    p.add_argument("--cost", action="store_true", help="what the model costs: FLOPs, inference and training memory, "
                   "a decode-speed bound, each with its formula (JSON: a 'cost' key)")
    add_cost_arguments(p)
    p.add_argument("--tokenizer", choices=LEVELS, default="word", help="how --text is split (default word)")
    p.add_argument("--target-text", "--target_text", dest="target_text",
                   help="the encoder-decoder's target (default: the text itself, shifted right)")
    return p


def tokens_line(text: TokenizedText) -> str:
    """The text's tokens as the pass reads them, control characters escaped, one line per sequence."""
    lines = [f"tokens ({text.level} level, vocab_size {text.vocab_size}, id 0 is {START_TOKEN}), as token=id:"]
    for seq in text.source:
        lines.append("  " + " ".join(f"'{escaped(t)}'={i}" for t, i in zip(seq, text.ids(seq))))
    return "\n".join(lines)


def _cell(x) -> str:
    if isinstance(x, bool):
        return "True" if x else "."
    return str(x) if isinstance(x, int) else f"{x:.4f}"


def format_values(t: Trace, width: int = 10) -> str:
    """Each row's values, its first 16 x 16 of batch item 0 and head 0, with the tokens as labels."""
    def quoted(token: str) -> str:  # a token may be a space, or look like a number
        return f"'{escaped(token)[:width - 2]}'"

    blocks = []
    for r in t.rows:
        values, rows, cols = value_slice(t, r.key)
        if axes(r.formula)[-1] in ("M", "M_target", "vocab_size"):
            cols = [quoted(c) for c in cols]
        if r.key != "input_tokens":
            rows = [quoted(x) for x in rows]
        label = max(len(escaped(x)[:width]) for x in rows)
        lines = [f"row {r.index}, {r.name} {r.shape}" + ("" if r.numel <= 256 and len(values[0]) == r.shape[-1]
                                                          else ", first rows and columns of item 0")]
        lines.append(" " * label + " " + " ".join(escaped(c)[:width].rjust(width) for c in cols))
        for name, row in zip(rows, values):
            lines.append(escaped(name)[:width].ljust(label) + " " + " ".join(_cell(x).rjust(width) for x in row))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def read_text(args, parser: OneLineParser) -> TokenizedText | None:
    """The tokenized --text, or None; raises ValueError for flags that do not go together or an empty text."""
    if args.text is None:
        if args.target_text is not None:
            raise ValueError("--target-text needs --text: the target of which text?")
        return None
    given = [name for name in TEXT_SIZES if getattr(args, name) is not None]
    if given:
        flags = ", ".join(f"--{n.replace('_', '-')}" for n in given)
        raise ValueError(f"{flags} cannot go with --text: the text sets N, M, M_target and vocab_size; leave "
                         f"{'it' if len(given) == 1 else 'them'} out")
    if args.target_text is not None and args.arch not in (None, "encoder-decoder"):
        raise ValueError(f"--target-text is for the encoder-decoder; arch={args.arch} reads one sequence")
    return tokenize(args.text, args.tokenizer, args.target_text)


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
             + (f" activation={cfg.activation}" if cfg.activation != "relu" else "") + ("" if cfg.bias else " no bias")
             + parts_title(cfg)
             + (f" attention=mla kv_lora_rank={cfg.kv_lora_rank} q_lora_rank={cfg.q_lora_rank} rope_head_dim="
                f"{cfg.rope_head_dim} nope_head_dim={cfg.nope_head_dim} v_head_dim={cfg.v_head_dim}"
                if cfg.attention == "mla" else "")
             + (f" relative_buckets={cfg.relative_buckets} relative_max_distance={cfg.relative_max_distance}"
                if cfg.positional == "relative" else "")
             + ("" if cfg.scale_scores else " no_scale_scores") + ("" if cfg.scale_embeddings else " no_scale_embeddings"))
    if not t.shape_only:
        note = "live pass on CPU"
    elif t.estimate.over(t.budget_bytes):
        note = (f"shape-only pass on the meta device: a real one would need about {human_bytes(t.estimate.total)}, "
                f"over the memory budget of {human_bytes(t.budget_bytes)}")
    else:
        note = "shape-only pass on the meta device, as --shape-only asked"
    active = "" if t.active_params in (None, t.params["total"]) else f", {t.active_params:,} active for one token"
    return f"{title}\n{note}; {t.params['total']:,} parameters{active}\n\n" + "\n".join(lines)


def parts_title(cfg) -> str:
    """The experts, head width, qk_norm and window in the table's title, when the config has them."""
    out = f" head_dim={cfg.head_dim}" if cfg.head_dim != cfg.E // cfg.nhead else ""
    out += " qk_norm" if cfg.qk_norm else ""
    if cfg.moe:
        out += (f" n_experts={cfg.n_experts} top_k={cfg.top_k} d_ff_expert={cfg.d_ff_expert}"
                + (f" n_shared_experts={cfg.n_shared_experts}" if cfg.n_shared_experts else "")
                + (f" first_dense_layers={cfg.first_dense_layers}" if cfg.first_dense_layers else "")
                + ("" if cfg.norm_topk else " no norm_topk"))
    if cfg.window:
        out += f" window={cfg.window}" + (f" global_every={cfg.global_every}" if cfg.global_every else "")
    return out


def format_cost(report: CostReport) -> str:
    """The cost figures as lines: name, value, formula with the config's numbers."""
    lines = [f"parameters: {report.params.total:,} total, {report.params.active:,} active"]
    for title, group in (("compute", report.compute), ("FLOPs per token by component", report.flops_by_component),
                         ("inference memory", report.inference), ("decoding", report.decode),
                         ("training memory", report.training)):
        lines.append(f"\n{title}:")
        for f in group.values():
            value = human_bytes(f.value) if f.unit == "bytes" else f"{f.value:,.4g} {f.unit}"
            lines.append(f"  {f.name}: {value}   = {f.formula} = {f.filled}")
    live = report.live
    lines.append(f"\nlive check: FlopCounterMode counted {live['counted_flops']:,} FLOPs in the pass; "
                 f"the formula gives {live['formula_flops']:,}")
    if live["saved_bytes"] is not None:
        expected = "" if live["expected_saved_bytes"] is None else f"; our model's count {live['expected_saved_bytes']:,}"
        lines.append(f"saved for backward: {live['saved_bytes']:,} bytes measured{expected}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        text = read_text(args, parser)
        cfg = config_from(args)
        if text is not None:
            cfg = text_config(cfg, text)
        result = trace(cfg, text=text, shape_only=args.shape_only or None)
        report = cost_report(cfg, cost_settings_from(args)) if args.cost else None
    except ValueError as exc:  # a bad value, or a learned table shorter than the sequences
        return parser.fail(str(exc))
    if text is not None and text.cut:
        print(f"{parser.prog}: note: the text was cut to {MAX_TOKENS} tokens a line and {MAX_LINES} lines",
              file=sys.stderr)
    if args.json:
        out = result.to_dict(values=args.values) | ({"cost": report.to_dict()} if report is not None else {})
        print(json.dumps(out, indent=2))
    else:
        print(format_table(result) + ("" if text is None else "\n\n" + tokens_line(text))
              + ("\n\n" + format_values(result) if args.values and not result.shape_only else "")
              + ("" if report is None else "\n\n" + format_cost(report)))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
