"""Text made safe to quote inside Markdown."""

from __future__ import annotations

import re


def as_literal(text: str) -> str:
    """Text that Markdown shows as it is: every ASCII punctuation mark escaped. A link's values are
    quoted in its warning, and ``E=[x](http://…)`` or ``E=$x$`` would otherwise be a link or a formula.
    (A bare web address still becomes a link, by Streamlit's own rule, but one that shows where it goes.)"""
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", text)
