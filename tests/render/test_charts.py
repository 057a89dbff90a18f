"""render.charts: the heatmaps' sizes and labels, their colour scales and the sentence each gives a screen reader."""

from __future__ import annotations

import pytest

from core import TransformerConfig, trace
from core.views import ATTENTION_KINDS, MAX_POSITIONS, attention_map, memory_curve, positional_view, sinusoid_curves

CFG = TransformerConfig(N=3, M=8, M_target=6, E=12, nhead=3, vocab_size=20, layers=2)


@pytest.fixture(scope="module")
def t():
    return trace(CFG)


def test_an_undefined_similarity_is_a_blank_cell_that_says_why_and_never_nan():
    """The undefined cells reach the chart as no number (null: a NaN is no JSON, and the browser's parser
    refuses it), drawn blank in a dashed outline with a tooltip that says why; the chart's sentence for
    screen readers says so too, and a config without a zero vector draws as before."""
    import json

    from render.charts import UNDEFINED, similarity_spec, zero_vectors_caption

    one = TransformerConfig(N=1, M=1, M_target=1, E=1, nhead=1, vocab_size=10)
    v = positional_view(one, "sinusoidal")
    spec = similarity_spec(v)
    text = json.dumps(spec, allow_nan=False)
    assert "nan" not in text.lower()
    cells, blank = spec["layer"]
    assert cells["data"]["values"] == [{"position i": 0, "position j": 0, "cosine": None, "undefined": UNDEFINED}]
    assert cells["transform"] == [{"filter": "isValid(datum.cosine)"}]
    assert blank["transform"] == [{"filter": "!isValid(datum.cosine)"}] and blank["mark"]["fill"] == "transparent"
    assert {"field": "undefined", "type": "nominal", "title": "cosine"} in blank["encoding"]["tooltip"]
    assert spec["description"].endswith("the diagonal, each position with itself, is 1, except at position 0, a zero "
                                        "vector, whose row and column are undefined and left blank.")
    assert zero_vectors_caption(v, 1).startswith("The sinusoidal vector of position 0 is all zeros (at E = 1 its "
                                                 "only dimension is sin(0) = 0).")
    v = positional_view(CFG, "sinusoidal")
    spec = similarity_spec(v)
    json.dumps(spec, allow_nan=False)
    values = spec["layer"][0]["data"]["values"]
    assert len(values) == 64 and all(set(c) == {"position i", "position j", "cosine"} for c in values)
    assert spec["description"].endswith("the diagonal, each position with itself, is 1.")
    assert zero_vectors_caption(v, CFG.E) == ""


@pytest.mark.parametrize("M", [1, 2, 3, 8, 16, 32, 64])
def test_heatmaps_give_their_cells_room_at_every_length(M):
    """The cells get their own width and height (autosize "pad": axes and legend come on top, so a
    long axis title cannot squeeze them). Few positions still get MIN_PLOT pixels; more positions
    never get a smaller chart; the whole, decor included, stays within MAX_SIDE."""
    from render.charts import MASK_DECOR, MAX_SIDE, MIN_PLOT, WEIGHTS_DECOR, attention_spec, mask_spec

    t = trace(TransformerConfig(N=2, M=M, M_target=M, E=16, nhead=2, vocab_size=100))
    a = attention_map(t, next(iter(ATTENTION_KINDS)))
    for spec, decor in ((attention_spec(a), WEIGHTS_DECOR), (mask_spec(a), MASK_DECOR)):
        assert spec["autosize"]["type"] == "pad" and spec["usermeta"]["decor"] == list(decor)
        assert spec["width"] >= min(MIN_PLOT, MAX_SIDE - decor[0]) and spec["height"] >= MIN_PLOT
        assert spec["width"] + decor[0] <= MAX_SIDE and spec["height"] + decor[1] <= MAX_SIDE
        if M > 1:
            smaller = attention_map(trace(TransformerConfig(N=2, M=M // 2, M_target=M // 2, E=16, nhead=2,
                                                            vocab_size=100)), next(iter(ATTENTION_KINDS)))
            build = attention_spec if decor == WEIGHTS_DECOR else mask_spec
            assert build(smaller)["width"] <= spec["width"]


@pytest.mark.parametrize("M", [1, 2, 3, 5, 8, 9, 10, 12, 16, 32, 64])
def test_heatmap_axis_titles_never_run_past_their_cells(M):
    """A title longer than its side of the cells ran past them: beside a few rows the query title
    reached down into the key title. Each axis takes the longest of its titles that fits, and Vega
    is told to cut it at the cells' side in any case."""
    from render.charts import TITLE_CHAR_PX, attention_spec, mask_spec, positional_spec

    cfg = TransformerConfig(N=2, M=M, M_target=M, E=min(M, 16) if M % 2 == 0 else 1, nhead=1, vocab_size=100)
    a = attention_map(trace(cfg), "decoder masked self-attention")
    specs = [attention_spec(a), mask_spec(a), positional_spec(positional_view(cfg, "sinusoidal"))]
    for spec in specs:
        encoding = spec["layer"][0]["encoding"]
        for channel, side in (("x", spec["width"]), ("y", spec["height"])):
            title = encoding[channel]["title"]
            assert TITLE_CHAR_PX * len(title) <= side and encoding[channel]["axis"]["titleLimit"] == side, title
    weights = specs[0]["layer"][0]["encoding"]
    if M >= 10:  # room for the whole title
        assert weights["y"]["title"] == "query position (who is looking)"


def test_heatmap_labels_sit_centred_on_their_rows():
    """Streamlit's theme sets labelFlush, which on a band scale hung the first row's label half a
    line low (Vega flushes a label whose band starts at the scale's start). The heatmaps turn it off."""
    from render.charts import attention_spec, mask_spec, positional_spec, similarity_spec

    t = trace(CFG)
    a = attention_map(t, "decoder masked self-attention")
    v = positional_view(CFG, "sinusoidal", t)
    for spec in (attention_spec(a), mask_spec(a), positional_spec(v), similarity_spec(v)):
        encoding = spec["layer"][0]["encoding"]
        assert encoding["x"]["axis"]["labelFlush"] is False and encoding["y"]["axis"]["labelFlush"] is False


@pytest.mark.parametrize("M,E", [(1, 1), (8, 1), (8, 12)])
def test_the_positional_colour_scale_is_symmetric_about_zero(M, E):
    """White is 0 and the domain is [-m, m] for the table's largest magnitude m. The scale's middle
    used to be set with domainMid, which Vega rejects when every value has one sign (E = 1, M = 1:
    the single value sin(0) = 0), and the legend then read 0.000000."""
    from render.charts import positional_spec

    cfg = TransformerConfig(N=1, M=M, M_target=M, E=E, nhead=1, vocab_size=10)
    for kind in ("sinusoidal", "learned"):
        v = positional_view(cfg, kind)
        color = positional_spec(v)["layer"][0]["encoding"]["color"]
        m = max(abs(x) for row in v.table for x in row)
        assert color["scale"]["domain"] == ([-m, m] if m else [-1.0, 1.0]) and "domainMid" not in color["scale"]
        assert color["legend"]["format"] == ".2~f"


def test_every_chart_has_a_sentence_for_screen_readers():
    """Vega turns a spec's description into the chart's aria-label; the marks are hidden from
    screen readers, which otherwise stopped at every heatmap cell."""
    from render.charts import attention_spec, curves_spec, mask_spec, positional_spec, similarity_spec
    from render.tables import memory_spec, params_spec

    t = trace(CFG)
    a = attention_map(t, "decoder masked self-attention")
    points, crossover = memory_curve(CFG)
    v = positional_view(CFG, "sinusoidal", t)
    specs = {"weights": attention_spec(a), "mask": mask_spec(a), "table": positional_spec(v),
             "similarity": similarity_spec(v), "curves": curves_spec(sinusoid_curves(CFG.E, [0, 1], 8)),
             "memory": memory_spec(points, CFG.M, crossover), "params": params_spec(t)}
    for name, spec in specs.items():
        assert len(spec["description"]) > 40 and spec["config"]["aria"] is spec["config"]["mark"]["aria"] is False, name
        # Every chart's rows sit inside its layers, where Streamlit leaves them in the spec for the
        # first paint (render.tables.one_layer), never at the top, where it takes them out.
        assert "data" not in spec and all(layer["data"]["values"] for layer in spec["layer"]), name
    assert "6 query positions down by 6 key positions across" in specs["weights"]["description"]
    assert "15 of the 36 pairs are blocked" in specs["mask"]["description"]  # the causal mask's upper triangle
    assert f"attention > other activations from M = {crossover}" in specs["memory"]["description"]


def test_an_attention_maps_name_says_which_map_it_is_and_what_the_mask_blocked():
    """A screen reader hears the heatmap's description, not the four choices above it or the
    crosses in it: it names kind, layer, head and batch item, the part drawn of a capped map,
    and the number of blocked cells."""
    from render.charts import attention_spec

    t = trace(CFG)
    words = attention_spec(attention_map(t, "decoder masked self-attention", layer=1, head=2, item=0))["description"]
    assert words.startswith("Heatmap of the decoder masked self-attention weights of layer 1, head 2, batch item 0: "
                            "6 query positions down by 6 key positions across")
    assert "15 of the 36 cells are blocked by the mask" in words  # the causal mask's upper triangle
    words = attention_spec(attention_map(t, "encoder self-attention", item=2))["description"]
    assert "batch item 2" in words and "16 of the 64 cells are blocked" in words  # 2 padding keys x 8 queries
    big = trace(CFG.replace(N=2, M=100, M_target=100), shape_only=False)
    words = attention_spec(attention_map(big, "encoder self-attention", item=1))["description"]
    assert f"{MAX_POSITIONS} query positions down" in words and f"(the first {MAX_POSITIONS} of 100 queries" in words
    assert "no cell is blocked; the mask also hides 25 keys past those drawn" in words
