"""Altair heatmaps and curves for the attention and positional pages (no streamlit, no torch).

Each chart is built and validated by Altair once, as a template with named data; a rerun only
fills in the rows (``fill_data``), which keeps a widget change far below Altair's own build cost.
"""

from __future__ import annotations

import math
from functools import lru_cache

from typing import TYPE_CHECKING

import altair as alt

from render.palette import INK
from render.tables import FIT_WIDTH, described, fill_data, in_words
from render.words import counted

if TYPE_CHECKING:  # types only: core.views imports torch
    from core.views import AttentionMap, PositionalView

PER_CELL = 20  # pixels per heatmap cell, up to the largest size
MIN_PLOT = 96  # so that one to three positions stay readable
MAX_SIDE = 520  # heatmap side, axes and legend included

# What a heatmap draws beside its cells, so titles never squeeze them (docs/layout.md).
WEIGHTS_DECOR = (134, 90)  # (width, height): the colour scale on the right
MASK_DECOR = (60, 155)  # the legend below: the mask fits beside the weights
COLUMN_MAX = 320  # two heatmaps to a row on a laptop

PHONE_COLUMN = 328  # the narrowest common phone's main column
NARROWEST_COLUMN = 288  # an iPhone SE's
NARROWEST_FITS = NARROWEST_COLUMN + 12  # full_width errs wide by about this
TITLE_CHAR_PX = 6  # an axis title's letter, roughly

BAND_AXIS = {"labelFlush": False}  # each label centred on its row


def _fit_titles(spec: dict, x: tuple[str, ...], y: tuple[str, ...]) -> dict:
    """Give each axis the longest of its titles that fits along its side of the cells; ``titleLimit``
    cuts one short where TITLE_CHAR_PX guessed wrong, so no title runs into the other axis's."""
    view = spec["layer"][0]["encoding"]
    for channel, titles, side in (("x", x, spec["width"]), ("y", y, spec["height"])):
        title = next((t for t in titles if TITLE_CHAR_PX * len(t) <= side), titles[-1])
        view[channel]["title"] = title
        view[channel].setdefault("axis", {})["titleLimit"] = side
    return spec


def _side(n: int, most: int) -> int:
    """Pixels for ``n`` cells side by side: PER_CELL each, within [MIN_PLOT, most]. It grows with
    n and never shrinks as n grows."""
    return min(most, max(MIN_PLOT, PER_CELL * n))


def _size(spec: dict, cols: int, rows: int, decor: tuple[int, int], most: int = MAX_SIDE) -> dict:
    """Give a heatmap its cells' width and height, the whole at most ``most`` pixels a side; the decor
    goes in ``usermeta`` (ignored by Vega-Lite) for ``full_width``."""
    spec["width"], spec["height"] = _side(cols, most - decor[0]), _side(rows, most - decor[1])
    spec["autosize"] = {"type": "pad", "contains": "padding"}
    spec["usermeta"] = {"decor": list(decor)}
    return spec


# Each heatmap's axis titles, (x, y), longest first: a short map takes the shortest that fits.
WEIGHTS_TITLES = (("key position (what is looked at)", "key (what is looked at)", "key position"),
                  ("query position (who is looking)", "query (who is looking)", "query position"))
MASK_TITLES = (("key position",), ("query position",))
# The same, for a map whose axes are labelled with a text's tokens.
WEIGHTS_TOKEN_TITLES = (("key token (what is looked at)", "key (what is looked at)", "key token"),
                        ("query token (who is looking)", "query (who is looking)", "query token"))
MASK_TOKEN_TITLES = (("key token",), ("query token",))
TOKEN_LABEL_PX = 120  # a longer token label is cut with "…"
TOKEN_LABEL_ANGLE = -90  # upright key labels take one letter's height of their column, so none is hidden
DIGIT_LABEL_PX = 14  # what the decor above already holds for a position's one or two digits
TABLE_TITLES = (("embedding dimension", "dimension"), ("position",))


@lru_cache(maxsize=None)
def _attention_template() -> dict:
    weights = alt.Chart(alt.NamedData(name="cells")).mark_rect().encode(
        x=alt.X("key:O", title=WEIGHTS_TITLES[0][0], axis=alt.Axis(labelAngle=0, **BAND_AXIS)),
        y=alt.Y("query:O", title=WEIGHTS_TITLES[1][0], axis=alt.Axis(**BAND_AXIS)),
        color=alt.Color("weight:Q", scale=alt.Scale(scheme="viridis", domain=[0, 1]), title="weight"),
        tooltip=["query:O", "key:O", alt.Tooltip("weight:Q", format=".4f"), "blocked:N",
                 "query token:Q", "key token:Q"],
    )
    crosses = alt.Chart(alt.NamedData(name="cells")).transform_filter("datum.blocked").mark_text(
        text="×", color="#ff5555", fontSize=12).encode(x="key:O", y="query:O")
    return alt.layer(weights, crosses).to_dict()


def attention_cells(a: AttentionMap, queries: list[str] | None = None, keys: list[str] | None = None) -> list[dict]:
    """One record per (query, key) cell of the capped map: each axis by position, or by the label given for it
    (a text's tokens, one distinct label per position)."""
    return [
        {"query": queries[i] if queries else i, "key": keys[j] if keys else j, "weight": w, "blocked": b,
         "query token": a.query_tokens[i], "key token": a.key_tokens[j]}
        for i, (wrow, brow) in enumerate(zip(a.weights, a.blocked))
        for j, (w, b) in enumerate(zip(wrow, brow))
    ]


def _token_axes(spec: dict, queries: list[str], keys: list[str]) -> None:
    """Order a map's axes by position, not by the labels' text ("10 mat" before "2 cat"), keys upright."""
    for view in spec["layer"]:
        view["encoding"]["x"]["sort"], view["encoding"]["y"]["sort"] = list(keys), list(queries)
    x, y = spec["layer"][0]["encoding"]["x"], spec["layer"][0]["encoding"]["y"]
    x["axis"] = {**x.get("axis", {}), "labelAngle": TOKEN_LABEL_ANGLE, "labelLimit": TOKEN_LABEL_PX}
    y["axis"] = {**y.get("axis", {}), "labelLimit": TOKEN_LABEL_PX}


def _label_px(labels: list[str]) -> int:
    return min(TOKEN_LABEL_PX, TITLE_CHAR_PX * max(map(len, labels), default=0))


def _token_size(spec: dict, cols: int, rows: int, decor: tuple[int, int], queries: list[str],
                keys: list[str]) -> dict:
    """Size a map labelled with tokens: the labels widen the axes and the whole grows by as much, so its cells
    stay as large as a map of positions' and Vega hides no label."""
    extra = (max(0, _label_px(queries) - DIGIT_LABEL_PX), max(0, _label_px(keys) - DIGIT_LABEL_PX))
    return _size(spec, cols, rows, (decor[0] + extra[0], decor[1] + extra[1]), MAX_SIDE + max(extra))


def attention_spec(a: AttentionMap, queries: list[str] | None = None, keys: list[str] | None = None) -> dict:
    """Heatmap of one head's weights; red crosses mark what the mask blocked. ``queries`` and ``keys``, when
    given, label the axes (a text's tokens, distinct and already escaped) in place of the positions."""
    labelled = bool(queries and keys)
    spec = fill_data(_attention_template(), {"cells": attention_cells(a, queries if labelled else None,
                                                                      keys if labelled else None)})
    rows, cols = len(a.weights), len(a.weights[0]) if a.weights else 0
    described(spec, attention_words(a, labelled))
    if not labelled:
        return _fit_titles(_size(spec, cols, rows, WEIGHTS_DECOR), *WEIGHTS_TITLES)
    _token_axes(spec, queries, keys)
    return _fit_titles(_token_size(spec, cols, rows, WEIGHTS_DECOR, queries, keys), *WEIGHTS_TOKEN_TITLES)


def attention_words(a: AttentionMap, tokens: bool = False) -> str:
    """The heatmap in words, its accessible name: which map it is, its size and how many cells the mask
    blocked, so a screen reader can tell one of several maps apart without the choices above it."""
    rows, cols = len(a.weights), len(a.weights[0]) if a.weights else 0
    unit = "token" if tokens else "position"
    size = f"{counted(rows, 'query ' + unit)} down by {counted(cols, 'key ' + unit)} across"
    if a.capped:
        size += (f" (the first {rows} of {counted(a.queries, 'query', 'queries')} and {cols} of "
                 f"{counted(a.keys, 'key')})")
    blocked = sum(map(sum, a.blocked))
    one = blocked == 1
    crosses = (f"{blocked:,} of the {rows * cols:,} cells {'is' if one else 'are'} blocked by the mask, "
               f"{'' if one else 'each '}marked with a cross") if blocked else "no cell is blocked"
    if a.hidden_beyond:
        crosses += f"; the mask also hides {counted(a.hidden_beyond, 'key')} past those drawn"
    return (f"Heatmap of the {a.kind} weights of layer {a.layer}, head {a.head}, batch item {a.item}: {size}, "
            f"each weight from 0 to 1; {crosses}. Its numbers are in the table under it.")


@lru_cache(maxsize=None)
def _mask_template(blocked: str) -> dict:
    return alt.Chart(alt.NamedData(name="cells")).mark_rect(stroke="#ffffff", strokeWidth=0.3).encode(
        x=alt.X("key:O", title=MASK_TITLES[0][0], axis=alt.Axis(labelAngle=0, **BAND_AXIS)),
        y=alt.Y("query:O", title=MASK_TITLES[1][0], axis=alt.Axis(**BAND_AXIS)),
        color=alt.Color("state:N", scale=alt.Scale(domain=["visible", "blocked (True)"],
                                                   range=["#cfe0fc", blocked]), title="mask",
                        legend=alt.Legend(orient="bottom")),
        tooltip=["query:O", "key:O", "state:N"],
    ).to_dict()


def mask_spec(a: AttentionMap, theme: str = "light", queries: list[str] | None = None,
              keys: list[str] | None = None) -> dict:
    """The boolean mask itself: grey where True (blocked), light blue where the key is visible; the
    grey is the ``theme``'s (INK), dark on a light page and lighter on a dark one. ``queries`` and ``keys`` label
    the axes as in attention_spec."""
    labelled = bool(queries and keys)
    cells = [{"query": c["query"], "key": c["key"], "state": "blocked (True)" if c["blocked"] else "visible"}
             for c in attention_cells(a, queries if labelled else None, keys if labelled else None)]
    spec = fill_data(_mask_template(INK[theme]["blocked"]), {"cells": cells})
    rows, cols = len(a.weights), len(a.weights[0]) if a.weights else 0
    blocked = sum(map(sum, a.blocked))
    verb = "is" if 1 in (blocked, rows * cols) else "are"
    described(spec, f"The mask as a grid of {counted(rows, 'query', 'queries')} by {counted(cols, 'key')}: {blocked} "
                    f"of the {counted(rows * cols, 'pair')} {verb} blocked. The caption under it says which.")
    if not labelled:
        return _fit_titles(_size(spec, cols, rows, MASK_DECOR), *MASK_TITLES)
    _token_axes(spec, queries, keys)
    return _fit_titles(_token_size(spec, cols, rows, MASK_DECOR, queries, keys), *MASK_TOKEN_TITLES)


def full_width(spec: dict) -> int:
    """A heatmap's whole width in pixels, cells and decor, with a few to spare: the attention page gives each
    map a box this wide in a row that wraps, so the mask goes below the weights where both do not fit."""
    return spec["width"] + spec["usermeta"]["decor"][0] + 6


def scrolls_on_the_narrowest_phone(*specs: dict) -> bool:
    """Whether one of these heatmaps fits a 360 px phone's column but not a 320 px one's, where it scrolls
    sideways and the page says so."""
    return any(NARROWEST_FITS < full_width(spec) + _scale_digits_px(spec) and full_width(spec) <= PHONE_COLUMN
               for spec in specs)


def scroll_width(spec: dict) -> int:
    """The column width under which a heatmap may scroll sideways: full_width with its colour scale's longest
    label. It errs wide, so a page may say a map scrolls a little early, never too late."""
    return full_width(spec) + _scale_digits_px(spec)


def _scale_digits_px(spec: dict) -> int:
    """What a colour scale's labels take beyond one digit's width ("−1", "1"), such as a learned table's
    "−1.69"."""
    domain = spec["layer"][0]["encoding"]["color"].get("scale", {}).get("domain", [])
    if not domain or not all(isinstance(x, (int, float)) for x in domain):
        return 0
    return 6 * (len(f"{max(map(abs, domain)):.2f}".rstrip("0").rstrip(".")) - 1)  # the legend's ".2~f"


@lru_cache(maxsize=None)
def _table_template() -> dict:
    return alt.Chart(alt.NamedData(name="cells")).mark_rect().encode(
        x=alt.X("dimension:O", title=TABLE_TITLES[0][0], axis=alt.Axis(labelAngle=0, labelOverlap=True, **BAND_AXIS)),
        y=alt.Y("position:O", title=TABLE_TITLES[1][0], axis=alt.Axis(**BAND_AXIS)),
        # The domain is set for each table (symmetric_domain); two decimals at most on the legend.
        color=alt.Color("value:Q", scale=alt.Scale(scheme="redblue", reverse=True), title="value",
                        legend=alt.Legend(format=".2~f")),
        tooltip=["position:O", "dimension:O", alt.Tooltip("value:Q", format=".3f")],
    ).to_dict()


def positional_spec(v: PositionalView, most: int = MAX_SIDE) -> dict:
    """The positions x dimensions table as a heatmap (red positive, blue negative), at most `most`
    pixels a side."""
    cells = [{"position": p, "dimension": d, "value": x}
             for p, row in enumerate(v.table) for d, x in zip(v.dims, row)]
    spec = fill_data(_table_template(), {"cells": cells})
    spec["layer"][0]["encoding"]["color"]["scale"]["domain"] = symmetric_domain(v.table)
    described(spec, f"Heatmap of the {v.kind} positional encoding: {counted(v.positions, 'position')} down, "
                    f"{counted(len(v.dims), 'embedding dimension')} across, red positive and blue negative.")
    return _fit_titles(_size(spec, len(v.dims), v.positions, WEIGHTS_DECOR, most), *TABLE_TITLES)


def symmetric_domain(table: list[list[float]]) -> list[float]:
    """[-m, m] for the table's largest magnitude m, so white is exactly 0; [-1, 1] for an all-zero table.
    Not Vega's domainMid, which falls outside the domain of a table all of one sign."""
    m = max((abs(x) for row in table for x in row), default=0.0)
    return [-m, m] if m > 0 else [-1.0, 1.0]


UNDEFINED = "undefined (a zero vector)"  # an undefined similarity's tooltip


@lru_cache(maxsize=None)
def _similarity_template() -> dict:
    cells = alt.Chart(alt.NamedData(name="cells")).transform_filter("isValid(datum.cosine)").mark_rect().encode(
        x=alt.X("position j:O", axis=alt.Axis(labelAngle=0, labelOverlap=True, **BAND_AXIS)),
        y=alt.Y("position i:O", axis=alt.Axis(**BAND_AXIS)),
        color=alt.Color("cosine:Q", scale=alt.Scale(scheme="redblue", domain=[-1, 1], reverse=True)),
        tooltip=["position i:O", "position j:O", alt.Tooltip("cosine:Q", format=".3f")],
    )
    # An undefined similarity (a zero vector) gets no colour, as white means 0: a dashed outline keeps its cell.
    undefined = alt.Chart(alt.NamedData(name="cells")).transform_filter("!isValid(datum.cosine)").mark_rect(
        fill="transparent", stroke="#888888", strokeDash=[3, 2], strokeWidth=1).encode(
        x="position j:O", y="position i:O",
        tooltip=["position i:O", "position j:O", alt.Tooltip("undefined:N", title="cosine")],
    )
    return alt.layer(cells, undefined).to_dict()


def similarity_cells(v: PositionalView) -> list[dict]:
    """One record per (i, j) cell. An undefined similarity (NaN) is written as no number (null), which
    JSON can carry and Vega leaves out of the colour scale, and says why in its tooltip."""
    return [{"position i": i, "position j": j, "cosine": x} if not math.isnan(x)
            else {"position i": i, "position j": j, "cosine": None, "undefined": UNDEFINED}
            for i, row in enumerate(v.similarity) for j, x in enumerate(row)]


def similarity_spec(v: PositionalView, most: int = MAX_SIDE) -> dict:
    """Cosine similarity between positions' vectors: how alike two positions look to the model."""
    spec = fill_data(_similarity_template(), {"cells": similarity_cells(v)})
    diagonal = "the diagonal, each position with itself, is 1"
    if v.zero_positions:
        one = len(v.zero_positions) == 1
        diagonal += (f", except at {_positions(v.zero_positions)}, {'a zero vector' if one else 'zero vectors'}, "
                     f"whose {'row and column are' if one else 'rows and columns are'} undefined and left blank")
    vectors = "vector" if v.positions == 1 else "vectors"
    described(spec, f"Heatmap of the cosine similarity between the {v.kind} {vectors} of "
                    f"{counted(v.positions, 'position')}, "
                    f"from -1 (blue) to 1 (red); {diagonal}.")
    return _size(spec, v.positions, v.positions, WEIGHTS_DECOR, most)


def zero_vectors_caption(v: PositionalView, E: int) -> str:
    """Why the similarity map has blank cells: which positions' vectors are all zeros, why, and why that leaves
    their cosine undefined. Empty when none is."""
    if not v.zero_positions:
        return ""
    one = len(v.zero_positions) == 1
    if v.kind == "sinusoidal" and E == 1:
        why = "at E = 1 its only dimension is sin(0) = 0"  # for E >= 2 the column cos(p) is never 0 with it
    else:
        why = f"every number in {'it' if one else 'them'} is 0" + (" at initialisation" if v.kind == "learned" else "")
    which = _positions(v.zero_positions)
    whose, cells = (f"vector of {which} is", "its row and column") if one else \
        (f"vectors of {which} are", "their rows and columns")
    return (f"The {v.kind} {whose} all zeros ({why}). A zero vector has no direction, so its cosine similarity with "
            f"any position, itself included, is undefined (0 / 0): {cells} in the similarity map are left blank, in "
            "a dashed outline.")


def _positions(positions: list[int]) -> str:
    """'position 0', 'positions 0 and 3', 'positions 0, 3 and 5'."""
    return f"position{'s' if len(positions) > 1 else ''} {in_words(positions)}"


@lru_cache(maxsize=None)
def _curves_template() -> dict:
    return alt.Chart(alt.NamedData(name="points")).mark_line().encode(
        x=alt.X("position:Q", title="position"),
        y=alt.Y("value:Q", title="PE[pos, dim]", scale=alt.Scale(domain=[-1.05, 1.05])),
        # Below the plot and three to a row, so that a phone keeps the curves' width and every label whole.

        color=alt.Color("dimension:N", title="dimension", sort=None, legend=alt.Legend(orient="bottom", columns=3)),
        tooltip=["dimension:N", "position:Q", alt.Tooltip("value:Q", format=".3f")],
    ).properties(height=240, autosize=FIT_WIDTH).to_dict()


def curves_spec(curves: dict[int, list[float]]) -> dict:
    """A few dimensions of the sinusoidal table as curves along the positions."""
    points = [{"dimension": f"dim {d}", "position": p, "value": x}
              for d, values in curves.items() for p, x in enumerate(values)]
    return described(fill_data(_curves_template(), {"points": points}),
                     f"Line chart of sinusoidal dimension{'s' if len(curves) > 1 else ''} "
                     f"{', '.join(map(str, curves))} along the positions: "
                     "each a sine or cosine between -1 and 1, slower for higher dimensions.")
