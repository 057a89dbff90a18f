"""Two models side by side: their rows and shapes, parameters, KV cache, FLOPs and memory.

``python -m core.compare Llama-2-70B Mixtral-8x7B`` prints the comparison; each side is a preset's name
(any case, spaces or hyphens) or a link's fields, such as ``arch=decoder-only&E=64&nhead=4``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, fields
from typing import Any

from .cli import OneLineParser, run_main
from .config import PART_PRESETS, PRESETS, REAL_MODELS, TransformerConfig
from .cost import CostReport, cost_report
from .memory import human_bytes
from .trace import trace


@dataclass(frozen=True)
class Line:
    """One compared figure: its label, A's and B's values as shown, and whether they differ."""

    section: str
    label: str
    a: str
    b: str

    @property
    def differs(self) -> bool:
        return self.a != self.b


def _squashed(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name).casefold()


def find_preset(name: str) -> TransformerConfig | None:
    """The preset of that name, read in any case and with or without spaces and hyphens."""
    wanted = _squashed(name)
    for key, cfg in (PRESETS | REAL_MODELS | PART_PRESETS).items():
        if _squashed(key) == wanted or _squashed(key.split(" (")[0]) == wanted:
            return cfg
    return None


_FIELD_TYPES = {f.name: f.type for f in fields(TransformerConfig)}


def _value(name: str, text: str) -> Any:
    kind = str(_FIELD_TYPES[name])
    if "bool" in kind:
        if text.casefold() not in ("true", "false"):
            raise ValueError(f"{name}={text!r} must be true or false")
        return text.casefold() == "true"
    if "int" in kind:
        if not re.fullmatch(r"\d{1,12}", text):
            raise ValueError(f"{name}={text!r} must be a whole number")
        return int(text)
    return text


def read_side(text: str) -> TransformerConfig:
    """A preset's name, or ``field=value`` pairs joined by ``&`` (a link's query) on the default config."""
    preset = find_preset(text)
    if preset is not None:
        return preset
    if "=" not in text:
        names = ", ".join(PRESETS | REAL_MODELS | PART_PRESETS)
        raise ValueError(f"{text!r} is neither a preset ({names}) nor a link's fields such as arch=decoder-only&E=64")
    values: dict[str, Any] = {}
    for pair in text.lstrip("?").split("&"):
        name, _, raw = pair.partition("=")
        if name not in _FIELD_TYPES:
            raise ValueError(f"{name!r} is not a config field; the fields are {', '.join(_FIELD_TYPES)}")
        values[name] = _value(name, raw)
    return TransformerConfig(**values)


def _rows(cfg: TransformerConfig) -> dict[str, tuple[str, str]]:
    t = trace(cfg, shape_only=True)
    return {r.name: (r.formula, str(r.shape)) for r in t.rows}


def _number(f) -> str:
    return human_bytes(f.value) if f.unit == "bytes" else f"{f.value:,.4g} {f.unit}"


def compare(a: TransformerConfig, b: TransformerConfig, live: bool = False) -> list[Line]:
    """Every compared figure of A and B, in the order a page shows them; a row only one has reads "—"."""
    lines: list[Line] = []
    rows_a, rows_b = _rows(a), _rows(b)
    for name in list(rows_a) + [n for n in rows_b if n not in rows_a]:
        lines.append(Line("rows", name, rows_a.get(name, ("", "—"))[1], rows_b.get(name, ("", "—"))[1]))
    ra, rb = cost_report(a, live=live), cost_report(b, live=live)
    pa, pb = trace(a, shape_only=True).params, trace(b, shape_only=True).params
    lines.append(Line("parameters", "total", f"{ra.params.total:,}", f"{rb.params.total:,}"))
    lines.append(Line("parameters", "active", f"{ra.params.active:,}", f"{rb.params.active:,}"))
    for name in [n for n in pa if n != "total"] + [n for n in pb if n not in pa and n != "total"]:
        lines.append(Line("parameters", name, f"{pa[name]:,}" if name in pa else "—",
                          f"{pb[name]:,}" if name in pb else "—"))
    lines.append(Line("KV cache", "bytes per token, bf16", _per_token(ra), _per_token(rb)))
    lines.append(Line("FLOPs", "per token, forward", f"{ra.compute['FLOPs per token'].value:,}",
                      f"{rb.compute['FLOPs per token'].value:,}"))
    for key in ("weights, bf16", "KV cache", "peak activations", "inference total, bf16"):
        lines.append(Line("inference memory", key, _number(ra.inference[key]), _number(rb.inference[key])))
    for key in ("weights, gradients, optimizer", "activations, all layers", "training total per GPU"):
        lines.append(Line("training memory", key, _number(ra.training[key]), _number(rb.training[key])))
    return lines


def _per_token(r: CostReport) -> str:
    context, batch = r.settings.context or r.config.M, r.settings.batch or r.config.N
    return f"{r.inference['KV cache'].value / (context * batch):,.0f}"


def format_lines(lines: list[Line], a_name: str, b_name: str) -> str:
    """A plain-text table, differences marked with '*'."""
    width = max(len(line.label) for line in lines)
    wa = max(len(a_name), *(len(line.a) for line in lines))
    out, section = [], None
    for line in lines:
        if line.section != section:
            section = line.section
            out.append(f"\n{section}:\n  {'':{width}}  {a_name:>{wa}}  {b_name}")
        out.append(f"{'*' if line.differs else ' '} {line.label:{width}}  {line.a:>{wa}}  {line.b}")
    return "\n".join(out).lstrip("\n")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m core.compare", description="Compare two models side by side.")
    parser.add_argument("a", help="a preset's name, or a link's fields (arch=decoder-only&E=64)")
    parser.add_argument("b", help="the same for the other model")
    args = parser.parse_args(argv)
    try:
        lines = compare(read_side(args.a), read_side(args.b))
    except ValueError as exc:
        return parser.fail(str(exc))
    print(format_lines(lines, args.a, args.b))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
