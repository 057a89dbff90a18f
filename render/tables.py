"""Plain tables and Altair charts built from a trace: no streamlit, no torch, easy to test.

The explorer page renders what these return; keeping them apart from the page means a test can
check the table's live shapes against ``core.trace`` without a browser.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache

import altair as alt
import pandas as pd

from typing import TYPE_CHECKING

from core.config import file_name_sizes
from core.memory import human_bytes
from render.diagram import shape_text
from render.palette import INK

if TYPE_CHECKING:  # types only: importing them would import torch
    from core.trace import Trace
    from core.views import MemoryPoint

# The live shape comes straight after the name: on a phone the table shows its first three columns,
# and the shape is what a learner opened the explorer for; the formula that explains it is next.
TABLE_COLUMNS = ["#", "tensor", "live shape", "formula", "elements", "memory", "description"]
STACKED_COLUMN = "SDPA layout (heads stacked)"
# As wide as the column, and as high as the plot itself: a legend below must not take its rows from the plot.
FIT_WIDTH = {"type": "fit-x", "contains": "padding"}
PHONE_PLOT_PX = 300  # the memory chart's plot on a phone, about; wider screens have more room
LABEL_CHAR_PX = 6  # a character of Vega's label text, about

# What three lines of a description cell hold: the grid cuts a longer text without a mark, so the cell says
# where to read the rest (docs/layout.md, "The explorer's tables").
DESCRIPTION_CELL_CHARS = 125
READ_ON = " (more in “Read a row whole”)"
# A full stop and a space end a sentence, unless they end an abbreviation that a sentence goes on after:
# "e.g.", "i.e.", "vs." or "cf.", in any case ("etc." most often ends one).
SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bcf)\. ", re.IGNORECASE)

# Rows whose per-head view (the note's) has a stacked twin in the layout PyTorch's scaled_dot_product_attention takes, and that twin.
STACKED_TWIN = {"qkv_one_head": "q_stacked", "q_one_head": "q_stacked", "kv_one_head": "k_stacked",
                "head_output": "heads_stacked"}


def rows_frame(t: Trace, *, extras: bool = False, stacked: bool = False) -> pd.DataFrame:
    """The 14 rows (or the extras) as a DataFrame with the explorer's columns."""
    rows = t.extras if extras else t.rows
    frame = pd.DataFrame({
        "#": [r.index if not extras else i + 1 for i, r in enumerate(rows)],
        "tensor": [r.name for r in rows],
        "live shape": [shape_text(r.shape) for r in rows],
        "formula": [r.formula for r in rows],
        "elements": [r.numel for r in rows],
        "memory": [human_bytes(r.bytes) for r in rows],
        "description": [r.description for r in rows],
    })
    if stacked and not extras:
        frame.insert(4, STACKED_COLUMN, [stacked_shape(t, r.key) for r in rows])
    return frame


def cell_text(description: str) -> str:
    """A description as the explorer's table shows it: whole when it fits the cell's three lines; else its
    first sentence, or its first clauses, and where to read the rest (the 'Read a row whole' box)."""
    if len(description) <= DESCRIPTION_CELL_CHARS:
        return description
    room = DESCRIPTION_CELL_CHARS - len(READ_ON)
    first = SENTENCE_END.split(description, maxsplit=1)[0] + "."
    if len(first) > room:
        head = description[:room - 1]
        cut = max(head.rfind(mark) for mark in (", ", "; ", ": "))
        first = (head[:cut] if cut > 0 else head.rsplit(" ", 1)[0]) + "…"
    return first + READ_ON


def table_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as the explorer's table shows it: each description cut to what its cell holds (cell_text).
    The downloads keep them whole."""
    return frame.assign(description=frame["description"].map(cell_text))


def numbers_frame(values: list[list[float]], rows: list[str], columns: list[str]) -> pd.DataFrame:
    """A heatmap's numbers as a table: one named row and one named column per cell of the chart.

    Named labels ("query 3", "key 5") rather than a bare range, so each row has a header a screen
    reader can announce with its cells."""
    return pd.DataFrame(values, index=rows, columns=columns)


def stacked_shape(t: Trace, key: str) -> str:
    """How PyTorch holds a row: per-head rows are one slice of an (N, nhead, M, d_k) tensor."""
    twin = STACKED_TWIN.get(key)
    if twin == "heads_stacked" and t.config.arch != "encoder-decoder":  # one stack records its heads stacked
        return shape_text(t.shapes[t.row(key).hook])
    if twin is not None:
        return shape_text(t.row(twin).shape)
    if key == "attention_scores":
        return shape_text(t.row(key).shape) + " (already stacked)"
    return "same"


def table_csv(t: Trace) -> str:
    """The 14 rows as CSV, with the shape as a plain string and bytes as a number."""
    frame = rows_frame(t)
    frame.insert(6, "bytes", [r.bytes for r in t.rows])
    return frame.to_csv(index=False)


def title_lines(title: str, width: int = 20) -> str | list[str]:
    """An axis title longer than ``width`` characters, on two lines split at the space nearest its
    middle: Vega cuts a title at its axis's length."""
    if len(title) <= width or " " not in title:
        return title
    middle = len(title) // 2
    cut = min((i for i, c in enumerate(title) if c == " "), key=lambda i: abs(i - middle))
    return [title[:cut], title[cut + 1:]]


def sizes_text(cfg) -> str:
    """Every slider's value in one line, for what leaves the app (a handout, a slide, an answer key),
    where the sidebar that says them is not beside it."""
    tied = ", tied embeddings" if cfg.tie_embeddings else ""
    target = "" if cfg.M_target is None else f", M_target={cfg.M_target}"  # a single stack has none
    kv = "" if cfg.nhead_kv == cfg.nhead else f", nhead_kv={cfg.nhead_kv}"
    family = "" if cfg.arch == "encoder-decoder" else f"{cfg.arch}: "
    parts = "".join(f", {part}" for part, on in (("pre-norm", cfg.norm_first), (cfg.norm, cfg.norm != "layernorm"),
                                                 (cfg.activation, cfg.activation != "relu"), ("no bias", not cfg.bias))
                    if on)
    return (f"{family}N={cfg.N}, M={cfg.M}{target}, E={cfg.E}, nhead={cfg.nhead}{kv} (d_k={cfg.d_k}), "
            f"d_ff={cfg.d_ff}, vocab_size={cfg.vocab_size}, layers={cfg.layers}, {cfg.positional} positions{tied}"
            f"{parts}")


def table_file_name(cfg, extension: str) -> str:
    """A download's name with its sizes in it, so tables saved for two configs can be told apart."""
    tied = "_tied" if cfg.tie_embeddings else ""
    return f"transformer_shapes_{file_name_sizes(cfg)}_{cfg.positional}{tied}.{extension}"


MARKDOWN_COLUMNS = ["#", "tensor", "live shape", "formula", "elements", "memory"]


def table_markdown(t: Trace) -> str:
    """The 14 rows as a Markdown table under a line naming the sizes, to paste into a handout or
    slides. The descriptions are left out: a printed page has no room for them beside the shapes."""
    frame = rows_frame(t)[MARKDOWN_COLUMNS]

    def cells(values) -> str:
        return "| " + " | ".join(str(v).replace("|", "\\|") for v in values) + " |"

    lines = [f"Shapes of one forward pass at {sizes_text(t.config)}.", "", cells(MARKDOWN_COLUMNS),
             "|" + "|".join("---:" if c in ("#", "elements") else "---" for c in MARKDOWN_COLUMNS) + "|"]
    lines += [cells(f"{v:,}" if name == "elements" else v for name, v in row.items())
              for row in frame.to_dict("records")]
    return "\n".join(lines) + "\n"


def table_json(t: Trace) -> str:
    """Everything the CLI's --json gives: config, rows, extras, parameters, bytes."""
    return json.dumps(t.to_dict(), indent=2)


def params_frame(t: Trace) -> pd.DataFrame:
    """Parameters per component (the trace's live counts), largest first, without the total."""
    total = t.params.get("total", 0) or 1
    items = [(k, v) for k, v in t.params.items() if k != "total"]
    frame = pd.DataFrame(items, columns=["component", "parameters"])
    frame["share"] = frame["parameters"] / total
    return frame.sort_values("parameters", ascending=False, kind="stable").reset_index(drop=True)


def fill_data(spec: dict, datasets: dict[str, list[dict]]) -> dict:
    """A copy of a Vega-Lite spec whose named data sources carry these rows inline (a one-view
    chart as a layer of one, see one_layer)."""
    def walk(node):
        if isinstance(node, dict):
            if set(node) == {"name"} and node["name"] in datasets:
                return {"values": datasets[node["name"]]}
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node
    return one_layer(walk(spec))


# What belongs to one view of a chart, as opposed to the whole chart (size, config, description).
_VIEW_KEYS = ("data", "mark", "encoding", "transform", "params", "projection")


def one_layer(spec: dict) -> dict:
    """The same picture with its top-level rows moved into each layer that has none of its own: Streamlit
    sends top-level rows after the first paint, which then fits its scales to no rows ("Infinite extent")."""
    if "data" not in spec:
        return spec
    if "layer" in spec:
        outer = {k: v for k, v in spec.items() if k != "data"}
        return {**outer, "layer": [layer if "data" in layer else {"data": spec["data"], **layer}
                                   for layer in spec["layer"]]}
    if "mark" not in spec:
        return spec
    view = {k: spec[k] for k in _VIEW_KEYS if k in spec}
    return {**{k: v for k, v in spec.items() if k not in _VIEW_KEYS}, "layer": [view]}


def in_words(items) -> str:
    """Items as a sentence lists them: 'a', 'a and b', 'a, b and c'."""
    items = [str(item) for item in items]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def described(spec: dict, text: str) -> dict:
    """Give a chart one sentence for screen readers, and hide its marks from them.

    Vega makes ``description`` the chart's accessible name, so a screen reader does not read every mark
    and cell; the numbers are in tables beside the charts (ui.look.charts.show_numbers). The top-level ``aria``
    hides the axes and legends, ``mark.aria`` the marks, words drawn as marks included.
    """
    spec["description"] = text
    config = spec.setdefault("config", {})
    config["aria"] = False
    config.setdefault("mark", {})["aria"] = False
    return spec


def described_chart(chart: alt.TopLevelMixin, text: str) -> alt.TopLevelMixin:
    """``described`` for an Altair chart, which st.altair_chart then takes as it is."""
    return chart.properties(description=text).configure(aria=False).configure_mark(aria=False)


@lru_cache(maxsize=None)
def _params_template() -> dict:
    """The parameter chart, built and validated by Altair once; only its data changes."""
    chart = alt.Chart(alt.NamedData(name="params")).mark_bar().encode(
        x=alt.X("parameters:Q", title="parameters"),
        y=alt.Y("component:N", sort="-x", title=None, axis=alt.Axis(labelLimit=260)),
        color=alt.Color("component:N", legend=None),
        tooltip=["component:N", alt.Tooltip("parameters:Q", format=","), alt.Tooltip("share:Q", format=".1%")],
    ).properties(height=28 * 10, autosize=FIT_WIDTH)
    return chart.to_dict()


def params_spec(t: Trace) -> dict:
    """Horizontal bars: where the parameters live (a Vega-Lite spec built with Altair).

    Its description gives every bar's count, which is otherwise only in a tooltip that neither a keyboard
    nor a screen reader reaches."""
    frame = params_frame(t)
    spec = fill_data(_params_template(), {"params": frame.to_dict("records")})
    bars = "; ".join(f"{r.component} {r.parameters:,} ({r.share:.1%})" for r in frame.itertuples())
    return described(spec, f"Bar chart of the model's {t.params['total']:,} parameters by component, "
                           f"on a linear scale, largest first: {bars}.")


MEMORY_PARTS = {
    "params": "parameters (constant in M)",  # with a learned position table: LEARNED_PARAMS
    "linear": "activations growing like M",
    "vocab": "logits, probabilities (like M·vocab_size)",  # short enough for a phone's legend
    "attention": "attention maps, causal mask (like M²)",  # maps: scores and weights
}


# A learned position table has a row per position: past max_len, E more weights for every position more.
LEARNED_PARAMS = "parameters (grow past M = max_len)"  # short enough for a phone's legend


# The plot's width that holds the longest legend label on one line, after its symbol; narrower, a label's
# bracket goes to a second line (docs/layout.md, "The memory chart").
LEGEND_ONE_LINE_PX = 26 + 225



def label_lines(when: str, *breaks: str) -> str:
    """A Vega ``labelExpr`` that, while ``when`` holds, draws a label on two lines, broken at the first of
    ``breaks`` it contains. Each break has one space, where the lines part: ": " keeps its colon on the
    first line, " (" its bracket on the second. Otherwise, or without a break, the label stays one line."""
    lines = "datum.label"
    for at in reversed(breaks):
        where, cut = f"indexof(datum.label, '{at}')", at.index(" ")
        lines = (f"{where} > 0 ? [substring(datum.label, 0, {where} + {cut}), "
                 f"substring(datum.label, {where} + {cut + 1})] : {lines}")
    return f"{when} ? ({lines}) : datum.label"


LEGEND_LINES = label_lines(f"width < {LEGEND_ONE_LINE_PX}", " (")
LEGEND_ROW_PADDING = alt.ExprRef(f"width < {LEGEND_ONE_LINE_PX} ? 14 : 4")


def memory_parts(learned: bool) -> dict[str, str]:
    """The chart's parts and their labels; the parameters' label says whether they stay constant."""
    return {**MEMORY_PARTS, "params": LEARNED_PARAMS} if learned else MEMORY_PARTS


def memory_frame(points: list[MemoryPoint], learned: bool = False) -> pd.DataFrame:
    """Long format for Altair: one row per (M, part) with its bytes."""
    records = [
        {"M": p.M, "part": label, "bytes": getattr(p, field), "memory": human_bytes(getattr(p, field))}
        for p in points for field, label in memory_parts(learned).items()
    ]
    return pd.DataFrame(records)


@lru_cache(maxsize=None)
def _memory_template(ink: str, learned: bool, sides: tuple[str, ...],
                     x_title: str = "M = M_target (log scale)") -> dict:
    """The memory chart, built and validated by Altair once per colour of its labels, parameters'
    label and set of sides its line labels take (``sides``); only its data changes. A label layer
    is drawn only for a side some label takes: Vega warns of a layer with no rows."""
    lines = alt.Chart(alt.NamedData(name="memory")).mark_line(point=True).encode(
        x=alt.X("M:Q", scale=alt.Scale(type="log", base=2), title=x_title),
        y=alt.Y("bytes:Q", scale=alt.Scale(type="log"), title="bytes (log scale)", axis=alt.Axis(format="~s")),
        color=alt.Color("part:N", title=None,
                        scale=alt.Scale(domain=list(memory_parts(learned).values()),
                                        range=["#7f7f7f", "#1f77b4", "#ff7f0e", "#d62728"]),
                        legend=alt.Legend(orient="bottom", columns=1, labelLimit=0,  # one column: whole on a phone
                                          labelExpr=LEGEND_LINES, rowPadding=LEGEND_ROW_PADDING)),
        tooltip=["M:Q", "part:N", "memory:N"],
    )
    rules = alt.Chart(alt.NamedData(name="marks")).mark_rule(strokeDash=[4, 3]).encode(
        x="M:Q", color=alt.value(ink), tooltip=["what:N"])
    # Each dashed line is named on the chart, where a keyboard and a screen reader reach it, not in a tooltip.
    labels = [alt.Chart(alt.NamedData(name="marks")).transform_filter(f"datum.side == '{side}'").mark_text(
        align=side, dx=4 if side == "left" else -4, baseline="top").encode(
        x="M:Q", y=alt.Y("offset:Q", scale=None), text="lines:N", color=alt.value(ink))
        for side in sides]
    return alt.layer(lines, rules, *labels).properties(height=300, autosize=FIT_WIDTH).to_dict()


def memory_spec(points: list[MemoryPoint], current_M: int, crossover: int | None, theme: str = "light",
                learned_max_len: int | None = None, one_stack: bool = False) -> dict:
    """Bytes of a pass that keeps every layer's activations against M (= M_target), log-log: the M² line
    overtakes the others. ``theme`` ("light" or "dark") colours its labels (INK). ``learned_max_len``:
    the config's max_len when its positions are learned and the chart reaches past it: from there on the
    parameters grow with M."""
    top = max(p.M for p in points)
    labels = [(current_M, [f"your M = {current_M}"], 2)]
    if crossover is not None:
        labels.append((crossover, ["attention >", "other activations", f"from M = {crossover}"], 18))
    others = {M for M, _, _ in labels}

    def side(M: int, lines: list[str]) -> str:
        """The label's alignment: "left" draws it to the right of its line, "right" to the left. Away
        from the other dashed line, which would strike through it, where a phone's plot has room."""
        where = math.log(M) / math.log(top) if top > 1 else 0.0  # 0 to 1 along the log axis from 1
        width = LABEL_CHAR_PX * max(map(len, lines)) + 4
        room = {"left": (1 - where) * PHONE_PLOT_PX, "right": where * PHONE_PLOT_PX}
        other = [m for m in others if m != M]
        prefer = ("right" if other[0] > M else "left") if other else ("left" if M * M <= top else "right")
        fallback = "left" if prefer == "right" else "right"
        return prefer if room[prefer] >= width or room[fallback] < width else fallback

    # A label is drawn a line per item (Vega's text mark takes an array), so that a long one still
    # fits beside its line on a phone; "what" is the same words in one line, for tooltips.
    marks = [{"M": M, "what": " ".join(lines), "lines": lines, "offset": offset, "side": side(M, lines)}
             for M, lines, offset in labels]
    learned = learned_max_len is not None
    rows = {"memory": memory_frame(points, learned).to_dict("records"), "marks": marks}
    sides = tuple(s for s in ("left", "right") if any(m["side"] == s for m in marks))
    x_title = "M (log scale)" if one_stack else "M = M_target (log scale)"  # a single stack has no M_target
    spec = fill_data(_memory_template(INK[theme]["label"], learned, sides, x_title), rows)
    params = (f"parameters stay flat up to max_len = {learned_max_len}, then grow by E weights a position (a "
              f"learned position table has a row per position)" if learned else "parameters stay flat")
    against = "M" if one_stack else "M (= M_target)"
    return described(spec, f"Line chart, log-log, of the bytes one pass keeps against {against}: {params}, "
                           "activations and logits grow like M, attention scores and weights like M². "
                           + ". ".join(m["what"] for m in marks) + ".")
