"""The quiz's evidence, as tables and charts: pure builders, no Streamlit calls.

pages/quiz.py shows them (show_evidence); here they are made, so that each can be read and tested
on its own. An experiment's Evidence (quizzes.experiments) carries its values, its records and how to
draw them (``chart``): a line, bar or heatmap chart, each described in words for screen readers, or
a table of records, with the row the question asks about marked.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import altair as alt
import pandas as pd

from core.rows import SYMBOLS
from render.markdown import as_literal
from render.palette import INK
from render.tables import FIT_WIDTH, described_chart, label_lines, title_lines
from render.words import counted

if TYPE_CHECKING:  # a type only: the experiments run torch
    from quizzes.experiments import Evidence

# The learner's symbols with an underscore in them (M_target, d_k, ...), kept whole in the evidence's labels.
_SYMBOL = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(s for s in (*SYMBOLS, "max_len") if "_" in s)
                     + r")(?![A-Za-z0-9])")
ASKED = "▶ asked"  # marks, in words, the row of an evidence table that the question asks about
ASKED_STYLE = "background-color: rgba(255, 196, 0, 0.25); font-weight: bold"  # and shades it
# Cells closer to their borders than Streamlit's, so a record table fits a phone whole (docs/layout.md).
RECORD_CSS = [{"selector": "th, td", "props": "padding: 4px 3px"}]
# On the narrowest phones, smaller type and cells closer still; important, as RECORD_CSS comes with the table's id.
RECORD_PHONE_CSS = ('<style>@media (max-width: 380px) { [class*="st-key-evidence_"] :is(th, td) '
                    '{ font-size: 13px !important; padding: 4px 2px !important; } }</style>')
ROWS_IN_VIEW = 20  # an evidence table shows up to this many rows whole; a longer one scrolls
ROW_PX, HEADER_PX = 30, 30  # an evidence st.table's row and header heights, one line each (RECORD_CSS)


def value_text(v: Any) -> str:
    """A value as the evidence's table shows it: a whole number with thousands separators, a float to 4
    significant digits, a long list cut after 12 items. Sizes inside a shape keep no separators, which
    would read as more sizes than there are."""
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return _item(v)


def _item(v: Any) -> str:
    if isinstance(v, float):
        if math.isinf(v):  # a ratio over an exact 0: 'inf' reads like code
            return "infinite" if v > 0 else "minus infinite"
        return "no value" if math.isnan(v) else f"{v:.4g}"
    if isinstance(v, (list, tuple)) and len(v) > 12:
        return ", ".join(_item(x) for x in v[:12]) + ", …"
    if isinstance(v, tuple):
        return "(" + ", ".join(_item(x) for x in v) + ")"
    if isinstance(v, list):
        return "[" + ", ".join(_item(x) for x in v) + "]"
    return str(v)


def name_from_key(key: str) -> str:
    """A value's name when its experiment gives it none (Evidence.labels): underscores read as spaces,
    except inside the learner's symbols ("variance_unscaled_at_d_k" -> "variance unscaled at d_k",
    "M_target" stays). Better than the bare key, though still a key: every experiment names its values."""
    parts = _SYMBOL.split(key)  # the symbols at odd places
    return "".join(part if i % 2 else part.replace("_", " ") for i, part in enumerate(parts))


def _figure(v: Any) -> str:
    """A number as a sentence says it: whole numbers with thousands separators, others to 3 digits."""
    if pd.api.types.is_bool(v) or not pd.api.types.is_number(v):
        return str(v)
    return f"{int(v):,}" if float(v).is_integer() else f"{v:.3g}"


def _named(field: str, value: Any) -> str:
    """A category as a sentence names it: a number with its field's name ("layers 4"), a word alone."""
    return f"{field} {_figure(value)}" if pd.api.types.is_number(value) else str(value)


def _span(values: pd.Series) -> str:
    """The range a series covers, the figure a sentence can give when there are too many to list."""
    low, high = values.min(), values.max()
    return _figure(low) if low == high else f"from {_figure(low)} to {_figure(high)}"


def _heatmap_words(df: pd.DataFrame, spec: dict) -> str:
    """A heatmap in words: its size, and the cells that matter: the blocked ones of a mask, or the
    exact zeros, which the chart draws white, of an influence map."""
    x, y, field = spec["x"], spec["y"], spec["color"]
    size = f"{counted(df[y].nunique(), y)} down by {counted(df[x].nunique(), x)} across"
    if df[field].dtype == bool:
        return f"Heatmap of {field}, {size}: {int(df[field].sum())} of {len(df)} cells are {field}."
    zeros = int((df[field] == 0).sum())
    white = f", {zeros} of {len(df)} cells exactly zero (white)" if zeros else ""
    return f"Heatmap of {field}, {size}: {field} {_span(df[field])}{white}."


def _series_words(df: pd.DataFrame, spec: dict, kind: str) -> str:
    """Bars or lines in words: every value when there are a dozen or fewer, else each series' range."""
    x, y = spec["x"], spec["y"]
    what = "Bar chart" if kind == "bar" else "Line chart"
    if "color" not in spec:
        groups, by = [(None, df)], ""
    else:
        groups, by = list(df.groupby(spec["color"], sort=False)), f", one {kind} per {spec['color']}"
    series = [("" if name is None else _named(spec["color"], name), part) for name, part in groups]
    if len(df) <= 12:  # few enough to read every one
        figures = "; ".join(f"{name + ', ' if name else ''}{_named(x, px)}: {_figure(py)}"
                            for name, part in series for px, py in zip(part[x], part[y]))
    else:
        figures = "; ".join(f"{name + ': ' if name else ''}{y} {_span(part[y])} over {x} {_span(part[x])}"
                            for name, part in series[:6])
        figures += f"; and {len(groups) - 6} more" if len(groups) > 6 else ""
    return f"{what} of {y} against {x}{by}{' (log scale)' if spec.get('log_y') else ''}. {figures}."


def facets(ev: Evidence) -> list[tuple[str | None, pd.DataFrame]]:
    """The evidence's records split by its chart's facet (the model of an influence map, the layer of
    an FFN's weights), in the experiment's order; one unnamed part when it has no facet."""
    df = pd.DataFrame(ev.records)
    if "facet" not in ev.chart:
        return [(None, df)]
    return [(str(name), part) for name, part in df.groupby(ev.chart["facet"], sort=False)]


def chart_description(ev: Evidence, name: str | None = None, part: pd.DataFrame | None = None) -> str:
    """What an evidence chart shows, in words, its accessible name: what is drawn against what, and its
    figures, all of them when there are few. One map of a faceted heatmap (``name``, its records ``part``)
    says which of how many it is."""
    spec = ev.chart
    df = pd.DataFrame(ev.records) if part is None else part
    words = _heatmap_words(df, spec) if spec["kind"] == "heatmap" else _series_words(df, spec, spec["kind"])
    if name is not None:
        names = [n for n, _ in facets(ev)]
        return f"{ev.title.rstrip('?.!')}, map {names.index(name) + 1} of {len(names)}: {name}. {words}"
    return f"{ev.title}{'' if ev.title.endswith(('?', '.', '!')) else '.'} {words}"


def charts(ev: Evidence, theme: str = "light") -> list[alt.TopLevelMixin]:
    """Small Altair charts of the evidence records, by the kind the experiment asks for, each with
    its description for screen readers; ``theme`` colours a mask's blocked cells (INK). One chart,
    none (the evidence is a table), or one per facet of a faceted heatmap (facet_charts)."""
    if "facet" in ev.chart and ev.records:
        return facet_charts(ev, theme)
    drawn = _draw(ev, theme)
    return [] if drawn is None else [described_chart(drawn, chart_description(ev))]


def facet_charts(ev: Evidence, theme: str = "light") -> list[alt.TopLevelMixin]:
    """A faceted heatmap as one chart per facet, titled and described on its own, for show_evidence to set
    in a row that wraps (a Vega facet cannot). Each map has its own axes; the colour scale is one for all,
    so a shade means the same on every map."""
    whole = pd.DataFrame(ev.records)[ev.chart["color"]]
    domain = None if whole.dtype == bool else [float(whole.min()), float(whole.max())]
    # Drawn at their own size ("pad"): Streamlit otherwise squeezes axes and legend into the map's side.
    natural = alt.AutoSizeParams(type="pad", contains="padding")
    return [described_chart(_heatmap(part, ev.chart, theme, domain).properties(title=name, autosize=natural),
                            chart_description(ev, name, part)) for name, part in facets(ev)]


def _heatmap(df: pd.DataFrame, spec: dict, theme: str, domain: list[float] | None = None) -> alt.Chart:
    """One heatmap, smaller as one map of a facet, its legend under it so three fit side by side on a laptop.
    ``domain`` is the colour scale's, which a facet's maps share; None leaves it to Vega, from ``df``."""
    x, y, field = spec["x"], spec["y"], spec["color"]
    side = 180 if "facet" in spec else 240
    legend = alt.Legend(orient="bottom", gradientLength=side - 40) if "facet" in spec else alt.Undefined
    if df[field].dtype == bool:
        color = alt.Color(f"{field}:N", legend=legend, scale=alt.Scale(domain=[False, True],
                                                                       range=["#dbe9f6", INK[theme]["blocked"]]))
    else:  # exact zeros in white, so 'no influence at all' stands apart from 'a little'; the scheme is
        # named, light to dark in either theme, so that white is always its low end's neighbour
        scale = alt.Scale(type="symlog", scheme="blues", **({"domain": domain} if domain else {}))
        color = alt.condition(f"datum['{field}'] == 0", alt.value("white"),
                              alt.Color(f"{field}:Q", scale=scale, legend=legend))
    return alt.Chart(df).mark_rect(stroke="#ddd", strokeWidth=0.5).encode(
        x=alt.X(f"{x}:O"), y=alt.Y(f"{y}:O"), color=color, tooltip=list(df.columns)
    ).properties(width=side, height=side)


# In a narrow chart a bar's name breaks after its colon or before its bracket; the chart's box decides
# (docs/layout.md, "Quiz evidence").
_NARROW = "containerSize()[0] < 280"
BAR_NAME_LINES = label_lines(_NARROW, ": ", " (")
BAR_NAME_PX = alt.ExprRef(f"{_NARROW} ? 11 : 12")  # 12: Streamlit's theme's


def _draw(ev: Evidence, theme: str) -> alt.TopLevelMixin | None:
    spec = ev.chart
    kind = spec.get("kind")
    if not ev.records or kind not in ("line", "bar", "heatmap"):
        return None
    df = pd.DataFrame(ev.records)
    x, y = spec["x"], spec["y"]
    if kind == "heatmap":
        return _heatmap(df, spec, theme)
    positive = bool((df[y] > 0).all())
    scale = alt.Scale(type="log" if positive else "symlog") if spec.get("log_y") else alt.Scale()
    if kind == "bar" and spec.get("horizontal"):
        # A log axis ticks every power of ten, so a small bar cannot pass for a large one, and has no 0 to
        # start bars from.
        axis = alt.Axis()
        log_axis = positive and bool(spec.get("log_y"))
        if log_axis:
            low, high = math.floor(math.log10(df[y].min())), math.ceil(math.log10(df[y].max()))
            df = df.assign(start=10.0 ** low)
            decades = [10 ** k for k in range(low, high + 1)]  # one tick per power of ten, no other
            axis = alt.Axis(values=decades, labelExpr="replace(format(datum.value, '~s'), 'G', 'B')")
        return alt.Chart(df).mark_bar().encode(
            y=alt.Y(f"{x}:N", sort=None, title=None, axis=alt.Axis(
                labelLimit=400, labelOverlap=False, labelExpr=BAR_NAME_LINES, labelFontSize=BAR_NAME_PX,
                labelLineHeight=BAR_NAME_PX)),
            x=alt.X(f"{y}:Q", scale=scale, stack=None, title=y, axis=axis),
            **({"x2": alt.X2("start:Q")} if log_axis else {}),
            tooltip=[alt.Tooltip(f"{x}:N"), alt.Tooltip(f"{y}:Q", format=",")],
        ).properties(height=26 * len(df), autosize=FIT_WIDTH)  # the rows; the axis under them comes on top
    # Counts on a line's x axis (layers, d_k, positions) get whole-number ticks, the values the experiment ran.
    counts = kind == "line" and pd.api.types.is_integer_dtype(df[x])
    x_axis = alt.Axis(format="d", tickMinStep=1) if counts else alt.Axis()
    enc = {"x": alt.X(f"{x}:O") if kind == "bar" else alt.X(f"{x}:Q", axis=x_axis),
           "y": alt.Y(f"{y}:Q", scale=scale, title=title_lines(y)), "tooltip": list(df.columns)}
    if "color" in spec:
        enc["color"] = alt.Color(f"{spec['color']}:N")
        if kind == "bar":
            enc["xOffset"] = alt.XOffset(f"{spec['color']}:N")
    mark = alt.Chart(df).mark_bar() if kind == "bar" else alt.Chart(df).mark_line(point=True)
    # The height is the plot's own, with the axes and legend drawn around it, so neither is cut (FIT_WIDTH).
    return mark.encode(**enc).properties(height=220, autosize=FIT_WIDTH)


def literal_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` for st.table, which reads every cell and header as Markdown: each text escaped (as_literal),
    so "W^Q", "max |difference|" and "#" show as written; numbers stay numbers, right-aligned."""
    return pd.DataFrame({as_literal(str(c)): [as_literal(v) if isinstance(v, str) else v for v in df[c]]
                         for c in df.columns})


def marked_table(records: list[dict[str, Any]], asked: str | None) -> tuple[Any, dict[str, Any] | None]:
    """An evidence table, with the row the question asks about marked in words and shaded.

    Records may name their row with a "key" (core.rows), which is not shown. Returns the table, a
    pandas Styler (st.table keeps its shading and RECORD_CSS), and the marked record, or None when
    no record is the one asked about. Texts are escaped (literal_frame).
    """
    df = pd.DataFrame(records)
    keys = list(df.pop("key")) if "key" in df else []
    df = literal_frame(df)
    if asked is None or asked not in keys:
        return df.style.set_table_styles(RECORD_CSS), None
    at = keys.index(asked)
    df.insert(0, "your question", [ASKED if i == at else "" for i in range(len(df))])
    styled = df.style.set_table_styles(RECORD_CSS)
    return styled.apply(lambda row: [ASKED_STYLE if row.name == at else ""] * len(row), axis=1), records[at]


def table_height(rows: int) -> int | str:
    """A height that shows every row of a short evidence table; a longer one shows ROWS_IN_VIEW rows and half
    of the next, a hint that it scrolls, under a header that stays put."""
    return "content" if rows <= ROWS_IN_VIEW else HEADER_PX + ROW_PX * ROWS_IN_VIEW + ROW_PX // 2
