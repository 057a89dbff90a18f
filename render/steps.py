"""One step of the pass as a page shows it: the formula, then each operand and the result as a heat table.

Pure: a step comes in as ``core.steps.plain_step``'s plain values (lists and labels), and goes out as
captions and Stylers; neither streamlit nor torch here.
"""

from __future__ import annotations

from dataclasses import dataclass

from pandas.io.formats.style import Styler

from render.values import heat_table, shown_labels, values_frame


@dataclass(frozen=True)
class Panel:
    """One table of a step: an operand or the result, with the words that say what it is."""

    title: str
    caption: str
    table: Styler


def _shape(view: dict) -> str:
    axes = view["axes"]
    if not axes:
        return "a number"
    return "(" + ", ".join(f"{a}={n}" for a, n in zip(axes, view["shape"])) + ")"


def panel(view: dict, words: str = "") -> Panel:
    """A slice of an operand or of the result as a titled heat table."""
    values = [[float("nan") if v is None else float(v) for v in line] for line in view["values"]]
    frame = values_frame(values, shown_labels(view["row_labels"]), shown_labels(view["col_labels"]))
    shown = len(view["values"]) * (len(view["values"][0]) if view["values"] else 0)
    total = 1
    for n in view["shape"]:
        total *= n
    cut = f"; the first {len(values)} × {len(values[0]) if values else 0} shown" if shown < total else ""
    return Panel(view["name"], f"{_shape(view)}{cut}" + (f". {words}" if words else ""), heat_table(frame))


def step_panels(step: dict) -> tuple[list[Panel], Panel]:
    """The operands' panels, in the formula's order, and the result's."""
    return ([panel(o, o.get("words", "")) for o in step["operands"]],
            panel(step["result"], f"row {step['index']}, as the pass recorded it"))


def step_title(step: dict) -> str:
    """'Row 5, Q of one head = X · W^Q_0 + b^Q_0'"""
    return f"Row {step['index']}, {step['name']} = {step['formula']}"
