"""A tensor's numbers as the seed note's screenshots show them: a heat-coloured table, one row per token.

Pure builders (pandas and Altair, neither streamlit nor torch): a page hands in plain lists of floats and
the learner's tokens, and gets a Styler or a chart back. A token is only ever a label or a cell's text,
never markup: Streamlit draws both as text.
"""

from __future__ import annotations

import math
import numbers

import pandas as pd
from pandas.io.formats.style import Styler

from core.tokens import escaped

# A space is invisible in a label and a newline would break it: each gets a sign of its own. Every other
# control character and text-direction override is written as an escape (core.tokens.escaped).
_VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"}
LABEL_CHARS = 24  # a longer token is cut in a label (a word-level token may be a whole run of text)
DIGITS = 3  # decimals in a value table, as in the seed's screenshots


def shown_token(token: str) -> str:
    """A token as a label shows it: a space as ␣, a newline as ⏎, other control characters escaped (\\x07)."""
    text = escaped("".join(_VISIBLE.get(ch, ch) for ch in token))
    return text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS - 1] + "…"


def token_labels(tokens: list[str]) -> list[str]:
    """One label per position, "3 cat": the position keeps two equal tokens apart (a table's rows need
    distinct names), the token says which it is."""
    return [f"{i} {shown_token(t)}" for i, t in enumerate(tokens)]


def shown_labels(labels: list[str]) -> list[str]:
    """Labels a table can name its rows by: indices and a lone name as they are; tokens escaped and told apart
    by their position (a table's rows need distinct names)."""
    plain = len(labels) <= 1 or (all(label.isdigit() for label in labels) and len(set(labels)) == len(labels))
    return list(labels) if plain else token_labels(list(labels))


def token_frame(tokens: list[str], ids: list[int]) -> pd.DataFrame:
    """The token table: each position's token beside the id the model reads."""
    return pd.DataFrame({"position": range(len(tokens)), "token": [shown_token(t) for t in tokens], "id": ids})


def vocab_frame(vocab: list[str]) -> pd.DataFrame:
    """The vocabulary: every id with its token, id 0 the start token."""
    return pd.DataFrame({"id": range(len(vocab)), "token": [shown_token(t) for t in vocab]})


def values_frame(values: list[list[float]], rows: list[str], columns: list[str] | None = None) -> pd.DataFrame:
    """A matrix of values with named rows (tokens) and columns (dimensions, keys or vocabulary entries)."""
    width = len(values[0]) if values else 0
    return pd.DataFrame(values, index=rows, columns=columns if columns is not None else [str(j) for j in range(width)])


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b))  # type: ignore[return-value]


_WHITE, _BLUE, _RED = (255, 255, 255), (49, 99, 186), (200, 40, 46)


def heat_colour(value: float, most: float) -> str:
    """A diverging colour: white at 0, deeper blue below and red above, full at ±``most``."""
    if most <= 0 or math.isnan(value):  # all zeros, or NaN
        return "#ffffff"
    t = max(-1.0, min(1.0, value / most))
    r, g, b = _mix(_WHITE, _RED if t > 0 else _BLUE, abs(t))
    return f"#{r:02x}{g:02x}{b:02x}"


def _cell_css(value: float, most: float) -> str:
    colour = heat_colour(value, most)
    dark = most > 0 and not math.isnan(value) and abs(value) / most > 0.55  # white text on the deeper colours
    return f"background-color: {colour}; color: {'#ffffff' if dark else '#111111'}"


def heat_table(frame: pd.DataFrame) -> Styler:
    """The values coloured by sign and size, on one scale for the whole table, to DIGITS decimals.

    -inf (a masked score) is shown as −∞, uncoloured."""
    finite = frame.where(frame.abs() != float("inf"))
    most = float(finite.abs().max().max()) if finite.size else 0.0
    most = 0.0 if math.isnan(most) else most
    return (frame.style
            .map(lambda v: _cell_css(v if abs(v) != float("inf") else 0.0, most))
            .format(lambda v: "−∞" if v == float("-inf") else ("∞" if v == float("inf") else _number(v))))


def _number(v) -> str:
    """Token ids as the whole numbers they are; every other value to DIGITS decimals."""
    return str(v) if isinstance(v, numbers.Integral) else f"{v:.{DIGITS}f}"
