"""render.tables' chart specs: the parameter breakdown and the memory chart, its labels and its sentence."""

from __future__ import annotations

import pytest

from core import TransformerConfig, trace
from core.views import memory_curve

CFG = TransformerConfig(N=3, M=8, M_target=6, E=12, nhead=3, vocab_size=20, layers=2)


@pytest.fixture(scope="module")
def t():
    return trace(CFG)


def test_the_parameter_charts_name_gives_every_bars_count():
    """Each bar's count was in its tooltip only, out of reach of a keyboard or a screen reader, and
    the description spoke of a log scale on a linear axis."""
    from render.tables import params_spec

    t = trace(CFG)
    spec = params_spec(t)
    words = spec["description"]
    assert f"{t.params['total']:,} parameters" in words
    for name, count in t.params.items():
        if name != "total":
            assert f"{name} {count:,} (" in words, name
    x_scale = spec["layer"][0]["encoding"]["x"].get("scale", {})
    assert ("log" in words) == (x_scale.get("type") == "log")


@pytest.mark.parametrize("M", [1, 2, 8, 40, 55, 64, 128, 512, 1024, 4096])
def test_the_memory_charts_labels_stay_clear_of_the_other_dashed_line(M):
    """On a phone's plot (about 300 px, 6 px per character) neither label of the two dashed lines
    ("your M", the crossover) runs across the other line, nor off the plot: at M = 64, 128 or 1024
    a label used to be struck through by the other line."""
    import math

    from render.tables import LABEL_CHAR_PX, PHONE_PLOT_PX, memory_spec

    cfg = TransformerConfig(N=2, M=M, M_target=M, E=16, nhead=2, vocab_size=100)
    points, crossover = memory_curve(cfg)
    spec = memory_spec(points, M, crossover)
    marks = next(layer["data"]["values"] for layer in spec["layer"]  # the rules' and labels' layers share them
                 if layer.get("data", {}).get("values") and "side" in layer["data"]["values"][0])
    top = max(p.M for p in points)

    def x(m: int) -> float:
        return math.log(m) / math.log(top) * PHONE_PLOT_PX

    for mark in marks:
        width = LABEL_CHAR_PX * max(map(len, mark["lines"])) + 4
        at = x(mark["M"])
        start, end = (at, at + width) if mark["side"] == "left" else (at - width, at)  # "left": drawn rightwards
        assert 0 <= start and end <= PHONE_PLOT_PX
        for other in marks:
            if other["M"] != mark["M"]:
                assert not start < x(other["M"]) < end, (mark["what"], other["M"])


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_the_memory_charts_parameter_line_is_labelled_as_it_runs(positional):
    """With a learned position table the parameters grow past max_len (a model that runs at M needs M
    rows), so 'constant in M' was false there: the label and the description say what the line does."""
    from render.tables import LEARNED_PARAMS, MEMORY_PARTS, memory_spec

    cfg = TransformerConfig(N=2, M=8, E=16, nhead=2, vocab_size=100, positional=positional)
    points, crossover = memory_curve(cfg)
    learned = positional == "learned"
    spec = memory_spec(points, cfg.M, crossover, learned_max_len=cfg.max_len if learned else None)
    params = [p.params for p in points]
    drawn = {row["part"] for layer in spec["layer"] for row in layer.get("data", {}).get("values", [])
             if "part" in row}
    if learned:
        assert params[-1] > params[0] and LEARNED_PARAMS in drawn and MEMORY_PARTS["params"] not in drawn
        assert f"parameters stay flat up to max_len = {cfg.max_len}, then grow" in spec["description"]
    else:
        assert len(set(params)) == 1 and MEMORY_PARTS["params"] in drawn
        assert "parameters stay flat," in spec["description"]


@pytest.mark.parametrize("M", [1, 8, 64, 4096])
def test_the_memory_chart_draws_no_label_layer_without_labels(M):
    """A label layer filtered down to no rows made Vega warn 'Infinite extent for field "M"' in the
    browser's console: every text layer the chart has gets at least one label."""
    from render.tables import memory_spec

    cfg = TransformerConfig(N=3, M=M, M_target=M, E=14, nhead=7, vocab_size=37, layers=1, d_ff=10)
    points, crossover = memory_curve(cfg)
    spec = memory_spec(points, M, crossover)
    marks = next(layer["data"]["values"] for layer in spec["layer"]
                 if layer.get("data", {}).get("values") and "side" in layer["data"]["values"][0])
    texts = [layer for layer in spec["layer"] if layer.get("mark", {}).get("type") == "text"]
    assert texts
    for layer in texts:
        [side] = [f["filter"].split("'")[1] for f in layer.get("transform", []) if "filter" in f]
        assert any(m["side"] == side for m in marks), side
