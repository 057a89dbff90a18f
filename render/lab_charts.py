"""The training lab's charts and their words: plain lists in, Altair (and sentences) out.

pages/training_lab.py trains and shows; here its loss curves, the accuracy per position, the
attention maps and the examples table are drawn, with the words that describe each for a screen
reader, so that they can be read and tested without running the page. The dashed lines' labels
find a place no curve runs through (label_place), on any screen from a 320 px phone up.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import altair as alt
import pandas as pd

from render.palette import INK
from render.tables import FIT_WIDTH, described, described_chart, fill_data
from render.words import counted

MASK_ON, MASK_OFF = "with the causal mask", "without the mask"
LAB_ROW_PX = 16  # a map's row, so every row's label has room (docs/layout.md)
LAB_LABEL_PX = (7, 11)  # column labels as large as a column is wide, so none overlap
HIDDEN_CROSS = "#b2182b"  # against "blues"' palest blue, where the crosses stand

STEP_TICKS = {"expr": "ceil(width / 120)"}  # so the step numbers never run together
ACCURACY_TOP = 1.1  # a strip above 100% that no line reaches, for the names of the two halves
LOSS_PLOT_PX, ACCURACY_PLOT_PX = 240, 280  # the two line charts' plot heights

# A dashed line's words go where no curve runs: the box they need, on the narrowest phone's plot.
LINE_LABEL_PX, LINE_LABEL_GAP, LINE_LABEL_CHAR_PX = 16, 3, 5
NARROW_PLOT_PX = 250
HALO_PX = 4  # a page-coloured outline, for a curve that crosses the words all the same
LINE_LABEL_FONT_PX, LINE_LABEL_FIT_PX = 11, 4.6  # smaller on a plot too narrow for the words

# In order of preference. Above the line reads as its name; at the right end a loss has settled, far
# from where it starts (at the left, near ln(vocab_size)).
PLACES = (("right", "above"), ("right", "below"), ("left", "above"), ("left", "below"))
Curve = list[tuple[float, float]]  # (x, y) points in data units, x increasing



def training_rows(loss: list[float]) -> list[dict]:
    """One chart row per training step, numbered from 1."""
    return [{"step": i + 1, "loss": v, "curve": "training loss"} for i, v in enumerate(loss)]


def crossings(curve: Curve, box: tuple[float, float, float, float]) -> int:
    """How many of the curve's segments (or its one point) pass through ``box`` = (left, right, low,
    high), in data units: each segment clipped to the box's x range, then its y range compared."""
    left, right, low, high = box
    segments = list(zip(curve, curve[1:])) or [(point, point) for point in curve]
    count = 0
    for (xa, ya), (xb, yb) in segments:
        a, b = max(xa, left), min(xb, right)
        if a > b:
            continue
        ys = [ya if xb == xa else ya + (yb - ya) * (x - xa) / (xb - xa) for x in (a, b)]
        count += min(ys) <= high and max(ys) >= low
    return count


def label_place(y: float, label: str, curves: list[Curve], x_range: tuple[float, float],
                y_range: tuple[float, float], plot_px: int) -> tuple[str, str]:
    """Where the label of the dashed line at ``y`` goes, as (end, side): the first of PLACES whose box
    no curve crosses and that stays inside the plot, else the one the fewest segments cross.

    ``x_range`` and ``y_range`` are the axes' domains, ``plot_px`` the plot's height in pixels."""
    (x0, x1), (y0, y1) = x_range, y_range
    wide = min(1.0, len(label) * LINE_LABEL_CHAR_PX / NARROW_PLOT_PX) * (x1 - x0)  # the words' width, in x units
    high = LINE_LABEL_PX * (y1 - y0) / plot_px  # their height and gap, in y units

    def crossed(place: tuple[str, str]) -> int:
        end, side = place
        left = x1 - wide if end == "right" else x0
        low = y if side == "above" else y - high
        return sum(crossings(curve, (left, left + wide, low, low + high)) for curve in curves)

    inside = [place for place in PLACES if (y + high <= y1 if place[1] == "above" else y - high >= y0)]
    return min(inside or PLACES, key=crossed)  # min keeps the first of equals: the preferred place


def line_words(row: dict, place: tuple[str, str], ink: str, ground: str) -> list[alt.Chart]:
    """A dashed line's label (``row``: its y and its words) at ``place``: once as a halo in the page's
    colour, ``ground``, then in ``ink`` on top. Vega draws a text's outline over its letters, so the
    halo is a layer of its own beneath them."""
    end, side = place
    at = {"align": end, "dx": -4 if end == "right" else 4,
          "baseline": "bottom" if side == "above" else "top",
          "dy": -LINE_LABEL_GAP if side == "above" else LINE_LABEL_GAP}
    need = len(row["label"]) * LINE_LABEL_FIT_PX + 4 + HALO_PX  # the words, their gap to the edge, the halo
    at["fontSize"] = alt.ExprRef(f"min({LINE_LABEL_FONT_PX}, {LINE_LABEL_FONT_PX} * width / {need:g})")
    words = alt.Chart(pd.DataFrame([row])).encode(
        y="y:Q", x=alt.value("width" if end == "right" else 0), text="label:N")
    return [words.mark_text(**at, color=ground, stroke=ground, strokeWidth=HALO_PX, strokeJoin="round"),
            words.mark_text(**at, color=ink)]


def loss_lines(floor: float | None, uniform: float | None) -> list[dict]:
    """The loss chart's dashed lines: their y (nats per token) and their words."""
    lines = []
    if floor is not None:
        lines.append({"y": floor, "label": f"best possible with the mask: ln(vocab_size)/2 = {floor:.2f}"})
    if uniform is not None:
        lines.append({"y": uniform, "label": f"a uniform guess: ln(vocab_size) = {uniform:.2f}"})
    return lines


def loss_chart(loss: list[float], *, floor: float | None = None, val: list[tuple[int, float]] | None = None,
               uniform: float | None = None, steps: int | None = None, theme: str = "light") -> alt.LayerChart:
    """Training loss per step (and held-out loss), with dashed reference lines, their words where no
    curve runs (label_place).

    ``steps`` fixes the x axis to the whole run, so a live chart fills up instead of rescaling;
    ``theme`` colours the reference lines and their words (INK).
    """
    rows = training_rows(loss) + [{"step": s, "loss": v, "curve": "held-out loss"} for s, v in (val or [])]
    curves = ["training loss", "held-out loss"] if val else ["training loss"]
    drawn = [[(r["step"], r["loss"]) for r in rows if r["curve"] == c] for c in curves]
    lines = loss_lines(floor, uniform)
    x_range = (0, steps or max((r["step"] for r in rows), default=1))
    y_range = (0, max([r["loss"] for r in rows] + [line["y"] for line in lines]))  # zero=True; Vega's nice may add
    for line in lines:
        line["place"] = label_place(line["y"], line["label"], drawn, x_range, y_range, LOSS_PLOT_PX)
    chart = _loss_layers(pd.DataFrame(rows), curves, lines=lines, steps=steps, ink=INK[theme])
    return described_chart(chart, loss_words(loss, floor=floor, val=val, uniform=uniform, steps=steps))


def loss_words(loss: list[float], *, floor: float | None = None, val: list[tuple[int, float]] | None = None,
               uniform: float | None = None, steps: int | None = None) -> str:
    """The loss chart in words, for screen readers: where the curve starts, ends and is lowest, and
    the reference lines. ``steps`` is the whole run's, for a chart drawn while it goes on."""
    done = f"{len(loss)} of {steps} steps so far" if steps else counted(len(loss), "step")
    text = f"Line chart of the training loss (cross-entropy, nats per token) per training step, {done}"
    if loss:
        low = min(range(len(loss)), key=loss.__getitem__)
        text += (f": {loss[0]:.3f} at step 1, {loss[-1]:.3f} at step {len(loss)}, lowest {loss[low]:.3f} "
                 f"at step {low + 1}.")
    else:
        text += "."
    if val:
        at, best = min(val, key=lambda sv: sv[1])
        times = "once" if len(val) == 1 else f"{len(val)} times"
        text += (f" Held-out loss, measured {times}: lowest {best:.3f} at step {at}, "
                 f"{val[-1][1]:.3f} at step {val[-1][0]}.")
    if floor is not None:
        text += f" Dashed line: the best possible with the mask, ln(vocab_size)/2 = {floor:.2f}."
    if uniform is not None:
        text += f" Dashed line: a uniform guess, ln(vocab_size) = {uniform:.2f}."
    return text


def _loss_layers(source: Any, curves: list[str], *, lines: list[dict], steps: int | None,
                 ink: dict[str, str]) -> alt.LayerChart:
    """The loss curves, and ``lines`` (y, label, place) dashed in ``ink``."""
    # Whole steps only on the x axis: a short run would get ticks at steps no run takes.
    base = alt.Chart(source).mark_line(point=False).encode(
        x=alt.X("step:Q", title="training step",
                scale=alt.Scale(domain=[0, steps], nice=False) if steps else alt.Undefined,
                axis=alt.Axis(tickCount=STEP_TICKS, tickMinStep=1, format="d", labelOverlap=True,
                              labelSeparation=8)),
        y=alt.Y("loss:Q", title="cross-entropy (nats per token)", scale=alt.Scale(zero=True)),
        color=alt.Color("curve:N", title=None, legend=alt.Legend(orient="top"),
                        scale=alt.Scale(domain=curves, range=["#3b5bdb", "#e8590c"][:len(curves)])),
        tooltip=["curve:N", "step:Q", alt.Tooltip("loss:Q", format=".3f")])
    layers: list[alt.Chart] = [base]
    if lines:
        rules = pd.DataFrame([{"y": line["y"]} for line in lines])
        layers.append(alt.Chart(rules).mark_rule(strokeDash=[5, 4], color=ink["label"]).encode(y="y:Q"))
        for line in lines:
            layers += line_words({"y": line["y"], "label": line["label"]}, line["place"], ink["label"],
                                 ink["ground"])
    return alt.layer(*layers).properties(height=LOSS_PLOT_PX, autosize=FIT_WIDTH)  # the legend above comes on top


# The live chart's floor label is placed without its data: under the line's right end, which a curve reaches last.
LIVE_FLOOR_PLACE = ("right", "below")


@lru_cache(maxsize=16)
def _live_loss_template(floor: float | None, steps: int, theme: str) -> dict:
    """The live loss chart of one run's (floor, steps) and theme, built and validated by Altair once."""
    lines = [{**line, "place": LIVE_FLOOR_PLACE} for line in loss_lines(floor, None)]
    return _loss_layers(alt.NamedData(name="loss"), ["training loss"], lines=lines, steps=steps,
                        ink=INK[theme]).to_dict()


def live_loss_spec(loss: list[float], floor: float | None, steps: int, theme: str = "light") -> dict:
    """The loss curve of a run in progress. Redrawn a few times a second, so only its rows are
    new: building it through Altair each time would hold Python's lock while the run's thread trains."""
    spec = fill_data(_live_loss_template(floor, steps, theme), {"loss": training_rows(loss)})
    return described(spec, loss_words(loss, floor=floor, steps=steps))


def accuracy_chart(results: dict[str, dict], theme: str = "light") -> alt.LayerChart:
    """Per-position accuracy of each run, the halves shaded, chance as a dashed line; ``theme``
    colours the words and the line drawn straight on the page (INK)."""
    ink = INK[theme]
    any_result = next(iter(results.values()))
    M, chance = any_result["settings"]["M"], any_result["chance"]
    x_scale = alt.Scale(domain=[-0.5, M - 0.5], nice=False, zero=False)
    rows = [{"position": p, "accuracy": a, "run": name}
            for name, res in results.items() for p, a in enumerate(res["per_position_accuracy"])]
    halves = pd.DataFrame([{"start": -0.5, "end": M / 2 - 0.5, "mid": (M / 2 - 1) / 2, "part": "x: random tokens"},
                           {"start": M / 2 - 0.5, "end": M - 0.5, "mid": (3 * M / 2 - 1) / 2,
                            "part": "reverse(x): the mirror"}])
    parts = alt.Scale(domain=["x: random tokens", "reverse(x): the mirror"], range=["#868e96", "#2f9e44"])
    shade = alt.Chart(halves).mark_rect(opacity=0.08).encode(
        x=alt.X("start:Q", scale=x_scale), x2="end:Q", color=alt.Color("part:N", legend=None, scale=parts))
    part = alt.Chart(halves).mark_text(baseline="top", dy=4, color=ink["label"]).encode(
        x=alt.X("mid:Q", scale=x_scale), y=alt.value(0), text="part:N")
    names = [n for n in (MASK_ON, MASK_OFF) if n in results]
    colors = {MASK_ON: "#3b5bdb", MASK_OFF: "#e8590c"}
    lines = alt.Chart(pd.DataFrame(rows)).mark_line(point=True).encode(
        x=alt.X("position:Q", title="position in [x, reverse(x)]", scale=x_scale, axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("accuracy:Q", title="accuracy of the next-token guess",
                scale=alt.Scale(domain=[0, ACCURACY_TOP], nice=False),
                axis=alt.Axis(values=[0, 0.2, 0.4, 0.6, 0.8, 1], format=".0%")),
        color=alt.Color("run:N", title=None, legend=alt.Legend(orient="top"),
                        scale=alt.Scale(domain=names, range=[colors[n] for n in names])),
        tooltip=["run", "position", alt.Tooltip("accuracy:Q", format=".3f")])
    # In per cent, as the y axis, the "chance" figure above the chart and the chart's sentence read it.
    chance_line = {"y": chance, "label": f"chance = 1/vocab_size = {chance:.1%}"}
    rule = alt.Chart(pd.DataFrame([chance_line])).mark_rule(strokeDash=[5, 4], color=ink["alert"]).encode(y="y:Q")
    drawn = [list(enumerate(res["per_position_accuracy"])) for res in results.values()]
    place = label_place(chance, chance_line["label"], drawn, (-0.5, M - 0.5), (0, ACCURACY_TOP), ACCURACY_PLOT_PX)
    words = line_words(chance_line, place, ink["alert"], ink["ground"])
    chart = alt.layer(shade, part, lines, rule, *words).resolve_scale(color="independent").properties(
        height=ACCURACY_PLOT_PX, autosize=FIT_WIDTH)
    return described_chart(chart, accuracy_words(results))


def accuracy_words(results: dict[str, dict]) -> str:
    """The accuracy chart in words, for screen readers: each run's accuracy on each half, and chance."""
    any_result = next(iter(results.values()))
    M, chance = any_result["settings"]["M"], any_result["chance"]
    runs = "; ".join(f"{name}: {res['first_half']:.1%} on the first half, x, and {res['second_half']:.1%} on "
                     "the second, reverse(x)" for name, res in results.items())
    runs = runs[:1].upper() + runs[1:]  # a sentence of its own: "With the causal mask: ..."
    return (f"Line chart of the accuracy of the next-token guess at each of the {M} positions of [x, reverse(x)], "
            f"one line per run. {runs}. Dashed line: chance, 1/vocab_size = {chance:.1%}.")


def position_labels(M: int) -> list[str]:
    """x0, x1, … for the random half, r0, r1, … for its mirror (r0 repeats the last x)."""
    return [f"x{p}" if p < M // 2 else f"r{p - M // 2}" for p in range(M)]


def attention_chart(weights: list[list[float]], M: int, title: str, *, causal: bool) -> alt.Chart:
    """One block's attention, averaged over heads: rows are guesses, columns the inputs looked at.

    With ``causal``, a cross marks each input the mask hid: its weight, 0, is the same palest blue a small
    learned weight rounds to.
    """
    labels = position_labels(M)
    keys = ["BOS", *labels[:-1]]  # input k holds token k - 1; the last token is never an input
    rows = [{"guessing": labels[q], "looks at": keys[k], "weight": w,
             "mask": "hidden" if causal and k > q else "visible"}  # guess q reads inputs 0..q
            for q, row in enumerate(weights) for k, w in enumerate(row)]
    smallest, largest = LAB_LABEL_PX
    # Sized in the browser, which alone knows the chart's width.
    column_font = {"expr": f"clamp(floor(width / {len(keys)}) - 3, {smallest}, {largest})"}
    base = alt.Chart(pd.DataFrame(rows), title=title)
    x = alt.X("looks at:O", sort=keys, title="input looked at",
              axis=alt.Axis(labelFontSize=column_font, labelOverlap=True, labelSeparation=1, labelFlush=False))
    # labelFlush off: Streamlit's theme turns it on, which sets the first row's label half a line low.
    y = alt.Y("guessing:O", sort=labels, title="guessing token", axis=alt.Axis(labelOverlap=False, labelFlush=False))
    cells = base.mark_rect().encode(
        x=x, y=y,
        color=alt.Color("weight:Q", scale=alt.Scale(scheme="blues", domain=[0, 1]),
                        legend=alt.Legend(title="weight", gradientLength=90)),
        tooltip=["guessing", "looks at", alt.Tooltip("weight:Q", format=".2f"), "mask"],
    )
    chart = cells
    if causal:
        cross_font = {"expr": f"clamp(floor(width / {len(keys)}), {smallest}, {LAB_ROW_PX - 4})"}  # a column wide
        crosses = base.transform_filter("datum.mask == 'hidden'").mark_text(
            text="×", color=HIDDEN_CROSS, fontSize=cross_font).encode(x=x, y=y)
        chart = alt.layer(cells, crosses)
    chart = chart.properties(height=LAB_ROW_PX * len(weights), autosize=FIT_WIDTH)  # every row labelled
    return described_chart(chart, attention_words(weights, M, title, causal=causal))


def attention_words(weights: list[list[float]], M: int, title: str, *, causal: bool) -> str:
    """The attention map in words, for screen readers, with the figure that tells the runs apart:
    how much weight lies right of the diagonal, on inputs the causal mask hides."""
    labels = position_labels(M)
    ahead = sum(w for q, row in enumerate(weights) for k, w in enumerate(row) if k > q)
    total = sum(sum(row) for row in weights) or 1.0
    crosses = " Each of those cells is marked with a cross: this run's mask hid it." if causal else ""
    return (f"Heatmap, {title}: attention weights averaged over heads, one row per guessed token ({labels[0]} "
            f"to {labels[-1]}), one column per input looked at (BOS, then {labels[0]} on). {ahead / total:.0%} of "
            "the weight lies right of the diagonal, on inputs the causal mask hides: the token being guessed "
            f"and those after it.{crosses}")


def examples_table(result: dict) -> pd.DataFrame:
    """Each example as two rows: the true sequence and the model's guess, a ✗ marking misses."""
    rows, index = [], []
    for i, ex in enumerate(result["examples"], 1):
        rows.append([str(t) for t in ex["sequence"]])
        rows.append([str(g) if g == t else f"{g} ✗" for g, t in zip(ex["predicted"], ex["sequence"])])
        index += [f"example {i}: sequence", f"example {i}: model's guess"]
    # The index's name heads its column, so a screen reader names the column of row labels.
    return pd.DataFrame(rows, index=pd.Index(index, name="example"), columns=position_labels(result["settings"]["M"]))
