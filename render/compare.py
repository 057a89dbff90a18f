"""The Compare page's side-by-side tables, each difference marked (no streamlit, no torch).

A line is anything with core.compare.Line's fields (section, label, a, b, differs): core.compare
imports torch, so it is read here by its fields only."""

from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

DIFFERS = "≠"  # the marker column's sign for a line where A and B differ
DIFF_BACKGROUND = "background-color: rgba(255, 196, 0, 0.28)"  # readable under light and dark ink alike


def sections(lines: Iterable[Any]) -> list[str]:
    """The sections in the order the lines hold them."""
    seen: list[str] = []
    for line in lines:
        if line.section not in seen:
            seen.append(line.section)
    return seen


def section_frame(lines: Iterable[Any], section: str, a_name: str, b_name: str) -> pd.DataFrame:
    """One section's lines as a table: a marker column (≠ where A and B differ), the label, A and B.

    Two sides with the same name get "(A)" and "(B)" after it, as a table needs distinct columns."""
    if a_name == b_name:
        a_name, b_name = f"{a_name} (A)", f"{b_name} (B)"
    rows = [{"": DIFFERS if line.differs else "", section: line.label, a_name: line.a, b_name: line.b}
            for line in lines if line.section == section]
    return pd.DataFrame(rows, columns=["", section, a_name, b_name])


def highlighted(frame: pd.DataFrame):
    """The frame as a Styler with each differing line's cells shaded (the marker column says it in words too)."""
    def shade(row: pd.Series) -> list[str]:
        return [DIFF_BACKGROUND if row.iloc[0] == DIFFERS else "" for _ in row]

    return frame.style.apply(shade, axis=1)


def differences(lines: Iterable[Any]) -> int:
    """How many lines differ."""
    return sum(1 for line in lines if line.differs)
