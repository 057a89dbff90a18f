"""core.views (what the pages draw) and render.diagram (the SVG figure): exact, tiny, seeded."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest
import torch

from core import TransformerConfig, trace
from core.memory import every_layer
from core.model import sinusoidal_table
from core.views import (ATTENTION_KINDS, MAX_DIMS, MAX_POSITIONS, attention_map, layer_crossover, memory_curve,
                        positional_view, shown_dims, sinusoid_curves)
from render.diagram import (WIDTH, architecture_steps, architecture_svg, architecture_title, edge_shape, figure,
                           shape_text)

CFG = TransformerConfig(N=3, M=8, M_target=6, E=12, nhead=3, vocab_size=20, layers=2)
EDGES = [(a.tail, a.head, a.hook, a.residual) for a in figure(CFG).arrows]
SVG = "{http://www.w3.org/2000/svg}"  # ElementTree names SVG tags with their namespace


@pytest.fixture(scope="module")
def t():
    return trace(CFG)


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_attention_map_rows_sum_to_one_and_blocked_cells_are_zero(t, kind):
    a = attention_map(t, kind, layer=1, head=2, item=2)
    weights = torch.tensor(a.weights)
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(len(a.weights)))
    blocked = torch.tensor(a.blocked)
    assert blocked.any(), "the last item is padded and the decoder is causal: something is blocked"
    assert torch.equal(weights[blocked], torch.zeros(int(blocked.sum())))
    assert a.blocked_weight_max == 0.0
    stack, block = ATTENTION_KINDS[kind]
    torch.testing.assert_close(weights, t.tensors[f"{stack}.1.{block}.weights"][2, 2])


def test_attention_map_masks_are_the_traced_ones(t):
    causal = attention_map(t, "decoder masked self-attention", item=0)
    assert causal.blocked == torch.ones(6, 6, dtype=torch.bool).triu(1).tolist()
    cross = attention_map(t, "cross-attention", item=2)
    assert (cross.queries, cross.keys) == (6, 8)
    padding = t.tensors["src_key_padding_mask"][2].tolist()  # last quarter of the last sequence
    assert padding == [False] * 6 + [True] * 2
    assert all(row == padding for row in cross.blocked)
    assert cross.key_tokens == t.tensors["src.tokens"][2].tolist()


def test_attention_map_is_capped_and_refuses_bad_input():
    long = trace(TransformerConfig(N=1, M=100, E=4, nhead=1, vocab_size=5, layers=1))
    a = attention_map(long, "encoder self-attention")
    assert (len(a.weights), len(a.weights[0]), a.queries, a.keys, a.capped) == (
        MAX_POSITIONS, MAX_POSITIONS, 100, 100, True)
    with pytest.raises(ValueError, match="head=1 is out of range"):
        attention_map(long, "encoder self-attention", head=1)
    with pytest.raises(ValueError, match="kind="):
        attention_map(long, "self")
    meta = trace(TransformerConfig(N=1, M=4, E=4, nhead=1, vocab_size=5, layers=1), shape_only=True)
    with pytest.raises(ValueError, match="shape-only"):
        attention_map(meta, "encoder self-attention")


def test_positional_views(t):
    v = positional_view(CFG, "sinusoidal")
    torch.testing.assert_close(torch.tensor(v.table), sinusoidal_table(8, 12))  # the paper's values: test_parity
    table = torch.tensor(v.table)  # (8, 12): every dimension shown at E = 12
    cosines = torch.nn.functional.cosine_similarity(table[:, None, :], table[None, :, :], dim=-1)  # (8, 8)
    torch.testing.assert_close(torch.tensor(v.similarity), cosines)
    torch.testing.assert_close(torch.tensor(v.similarity).diagonal(), torch.ones(8))
    learned_cfg = CFG.replace(positional="learned")
    lt = trace(learned_cfg)
    v = positional_view(learned_cfg, "learned", lt)
    torch.testing.assert_close(torch.tensor(v.table), lt.tensors["src.pos"])
    assert "own table" in v.note
    seeded = positional_view(CFG, "learned", t)  # the config is sinusoidal: a standalone seeded table
    assert "freshly seeded" in seeded.note and len(seeded.table) == 8
    assert positional_view(CFG, "learned").table == seeded.table  # seeded: the same every time


def test_positional_view_is_bounded_at_huge_sizes():
    huge = TransformerConfig(N=1, M=1_000_000, E=65_536, nhead=1, vocab_size=2, layers=1)
    v = positional_view(huge, "sinusoidal")
    assert v.positions == MAX_POSITIONS and len(v.dims) <= MAX_DIMS and len(v.table[0]) == len(v.dims)
    assert shown_dims(12) == list(range(12)) and shown_dims(64) == list(range(64))
    # Capped: whole (sine, cosine) pairs at a stride, never only the even (sine) dimensions.
    assert shown_dims(80) == [d for i in range(0, 40, 2) for d in (2 * i, 2 * i + 1)]
    assert shown_dims(640)[:6] == [0, 1, 20, 21, 40, 41] and len(shown_dims(640)) == 64
    for E in (65, 81, 127, 128, 12288):
        dims = shown_dims(E)
        assert len(dims) <= 64 and all(d + 1 in dims for d in dims if d % 2 == 0 and d + 1 < E)
    curves = sinusoid_curves(65_536, [0, 1, 65_535, 70_000], 10**9)
    assert sorted(curves) == [0, 1, 65_535] and len(curves[0]) == 512


def test_a_zero_vectors_cosine_similarity_is_undefined_not_zero():
    """At E = 1 the sinusoidal PE[0] is [sin 0] = [0]: normalize kept it at 0, and the heatmap showed
    position 0 as unlike itself (0, white), against the page's "most alike with itself". Its row and
    column are NaN now; every other cell is as it was, and no other table has a zero row."""
    import math

    v = positional_view(TransformerConfig(N=1, M=8, M_target=8, E=1, nhead=1, vocab_size=10), "sinusoidal")
    assert v.zero_positions == [0]
    assert all(math.isnan(v.similarity[0][j]) and math.isnan(v.similarity[j][0]) for j in range(8))
    signs = [math.copysign(1.0, math.sin(p)) for p in range(8)]  # one number each: the cosine is its sign's
    assert [row[1:] for row in v.similarity[1:]] == [[a * b for b in signs[1:]] for a in signs[1:]]
    for E in (1, 2, 3, 4, 12, 64, 640):
        cfg = TransformerConfig(N=1, M=64, M_target=64, E=E, nhead=1, vocab_size=10)
        for kind in ("sinusoidal", "learned"):
            v = positional_view(cfg, kind)
            assert v.zero_positions == ([0] if (E, kind) == (1, "sinusoidal") else []), (E, kind)
            nan = torch.tensor(v.similarity).isnan()
            assert nan.any().item() == bool(v.zero_positions), (E, kind)


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


def test_memory_curve_attention_overtakes_and_quadruples():
    points, crossover = memory_curve(CFG)
    assert crossover is not None
    by_M = {p.M: p for p in points}
    assert by_M[crossover].attention > by_M[crossover].linear + by_M[crossover].vocab
    below = every_layer(CFG.replace(M=crossover - 1, M_target=crossover - 1))
    assert below.attention <= below.linear + below.vocab  # the exact first M, not the next power of two
    for m in (8, 64, 1024):  # M = M_target: the attention term is exactly N*nhead*3M^2 floats per layer
        assert by_M[2 * m].attention == 4 * by_M[m].attention
        assert by_M[2 * m].params == by_M[m].params
    assert max(by_M) >= 4 * crossover


def test_memory_curve_stops_at_the_longest_M_the_config_allows():
    """The curve probed M = 2**20, core's limit, which N=4096 with nhead=1024 does not allow (the maps
    would be 2**64 bytes): it stops at the longest M that does, and still finds the exact crossover."""
    big = TransformerConfig(N=4096, M=8, E=4096, nhead=1024)
    points, crossover = memory_curve(big)
    at, below = (every_layer(big.replace(M=m, M_target=m)) for m in (crossover, crossover - 1))
    assert at.attention > at.linear + at.vocab and below.attention <= below.linear + below.vocab
    assert [p.M for p in points][-1] == 4096


def arrows(svg: str) -> dict[tuple[str, str], str]:
    """(from, to) -> label of every arrow group in the figure."""
    root = ElementTree.fromstring(svg)
    groups = root.findall(f"{SVG}g[@class='arrow']")
    return {(g.get("data-from"), g.get("data-to")): g.find(f"{SVG}text").text for g in groups}


def test_architecture_svg_labels_every_arrow_with_the_live_shape(t):
    svg = architecture_svg(CFG, t.shapes)
    labels = arrows(svg)  # parses: the figure is well-formed XML
    assert list(labels) == [(tail, head) for tail, head, _, _ in EDGES]
    for tail, head, hook, _ in EDGES:
        assert labels[(tail, head)] == shape_text(edge_shape(hook, t.shapes))
    assert labels[("src", "src_emb")] == "(3, 8)"
    assert labels[("enc_norm2", "dec_cross")] == "(3, 8, 12)"  # memory: (N, M, E)
    assert labels[("dec_norm1", "dec_cross")] == "(3, 6, 12)"  # decoder stream: (N, M_target, E)
    assert labels[("softmax", "probs")] == "(3, 6, 20)"
    assert "Encoder layer × 2" in svg and "Decoder layer × 2" in svg


def test_architecture_svg_keeps_every_shape_inside_the_picture(t):
    """Every box, circle and line lies within the view box, at any config."""
    root = ElementTree.fromstring(architecture_svg(CFG, t.shapes))
    HEIGHT = figure(CFG).height
    for rect in root.iter(f"{SVG}rect"):
        x, y, w, h = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
        assert 0 <= x and x + w <= WIDTH and 0 <= y and y + h <= HEIGHT
    for line in root.iter(f"{SVG}polyline"):
        for point in line.get("points").split():
            x, y = map(float, point.split(","))
            assert 0 <= x <= WIDTH and 0 <= y <= HEIGHT


def test_every_arrow_label_sits_on_a_white_halo(t):
    """A long shape reaches past its room beside the residual arrows, and the layer's dashed frame ran
    through its digits: every arrow's label is outlined in white, painted under its letters."""
    root = ElementTree.fromstring(architecture_svg(CFG, t.shapes))
    arrows = [g for g in root.iter(f"{SVG}g") if g.get("class") == "arrow"]
    labels = [text for arrow in arrows for text in arrow.iter(f"{SVG}text")]
    assert len(labels) == len(EDGES)
    for text in labels:
        halo = (text.get("stroke"), text.get("paint-order"), float(text.get("stroke-width")))
        assert halo == ("#ffffff", "stroke", 3)


@pytest.mark.parametrize("layers, drawn", [
    (1, "its single encoder layer and its single decoder layer"),
    (2, "one of its 2 encoder layers and one of its 2 decoder layers"),
])
def test_the_figure_s_title_counts_its_layers_in_plain_english(layers, drawn):
    """The title is also the image's alt text. With one layer per stack "one of its 1 encoder layers"
    read wrong: there is only the one."""
    cfg = TransformerConfig(N=2, M=3, E=4, nhead=2, vocab_size=10, layers=layers)
    title = f"The Transformer: {drawn}, every arrow labelled with the shape of the tensor it carries"
    assert architecture_title(cfg) == title
    assert f"<title>{title}</title>" in architecture_svg(cfg, trace(cfg, shape_only=True).shapes)


def test_architecture_svg_works_shape_only():
    big = TransformerConfig(N=64, M=2048, E=12288, nhead=96, vocab_size=50257, layers=2)
    labels = arrows(architecture_svg(big, trace(big, shape_only=True).shapes))
    assert labels[("softmax", "probs")] == "(64, 2048, 50257)"

def test_the_figure_in_words_has_one_sentence_per_arrow_with_the_same_shape(t):
    """The list under the figure is what a screen reader gets: each arrow in the figure's order,
    its two ends named so they cannot be mistaken for one another, and the shape it carries."""
    labels = list(arrows(architecture_svg(CFG, t.shapes)).values())
    steps = architecture_steps(CFG, t.shapes)
    assert len(steps) == len(EDGES) == len(labels)
    for step, label in zip(steps, labels):
        assert step.startswith("From ") and step.endswith(": " + label)
    assert steps[0] == "From inputs (source token ids) to input embedding × √E: (3, 8)"
    assert ("From the encoder's second Add & Norm to decoder multi-head cross-attention as the memory "
            "(its keys and values): (3, 8, 12)") in steps
    assert ("From the decoder's first Add & Norm to decoder multi-head cross-attention as its queries: "
            "(3, 6, 12)") in steps
    assert steps[-1] == "From softmax to output probabilities: (3, 6, 20)"
    drawn = [" ".join(box.lines).lower() for box in figure(CFG).boxes.values()]
    drawn_alike = {label for label in drawn if drawn.count(label) > 1}  # "+", "add & norm", ...
    assert {"+", "add & norm", "positional encoding"} <= drawn_alike
    for step in steps:  # told apart in the drawing by where they stand; never bare in words
        ends = step[len("From "):step.rindex(": ")].replace(" around the block (residual path)", "").split(" to ")
        assert not any(end.lower() in drawn_alike for end in ends), step


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


def test_the_crossover_is_the_exact_first_length_not_the_next_power_of_two():
    from core import DEFAULT

    points, crossover = memory_curve(DEFAULT)
    assert crossover == 55  # 583,825 attention bytes against 575,630 for the rest; at 54 attention loses
    assert 55 in [p.M for p in points]


def test_the_crossover_is_a_fact_about_layers_not_about_how_many_the_trace_keeps():
    """One layer pair's maps outweigh its other activations from the same M whatever N and the depth
    (the formula in layer_crossover, checked against the byte counts); the whole model's crossover
    only approaches it from above as the stack deepens, since the ends of the stack weigh less."""
    from core import DEFAULT

    for cfg in (DEFAULT, CFG, DEFAULT.replace(E=512, nhead=8), DEFAULT.replace(E=24, nhead=3, d_ff=50)):
        first = layer_crossover(cfg)
        for m, wins in ((first - 1, False), (first, True)):
            for N in (1, 5):
                one = every_layer(cfg.replace(N=N, M=m, M_target=m, layers=1))
                two = every_layer(cfg.replace(N=N, M=m, M_target=m, layers=2))
                assert (two.attention - one.attention > two.linear - one.linear) is wins, (cfg, m, N)
        whole = [memory_curve(cfg.replace(layers=L))[1] for L in (1, 2, 6, 12)]
        assert whole == sorted(whole, reverse=True) and whole[-1] >= first, (whole, first)
    assert layer_crossover(DEFAULT) == 43  # (12 * 16 + 64) / (3 * 2) = 42.7


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


def test_the_most_alike_pair_is_two_different_positions_with_a_defined_similarity():
    """The positional page's sentence about a table's likeness: the highest similarity off the diagonal
    (every position scores 1 with itself), leaving out undefined (NaN) ones; None with no pair left."""
    from core.views import PositionalView, most_alike_pair

    nan = float("nan")

    def view(similarity):
        n = len(similarity)
        return PositionalView(kind="learned", positions=n, dims=[0], table=[[0.0]] * n, similarity=similarity,
                              note="", zero_positions=[])

    assert most_alike_pair(view([[1.0, 0.2, nan], [0.2, 1.0, -0.5], [nan, -0.5, 1.0]])) == 0.2
    assert most_alike_pair(view([[1.0, -0.9], [-0.9, 1.0]])) == -0.9
    assert most_alike_pair(view([[1.0, nan], [nan, nan]])) is None
    assert most_alike_pair(view([[1.0]])) is None


FAMILIES = {
    "decoder-only": TransformerConfig(arch="decoder-only", N=2, M=5, E=12, nhead=3, vocab_size=20, layers=2),
    "encoder-only": TransformerConfig(arch="encoder-only", N=2, M=5, E=12, nhead=3, vocab_size=20, layers=1,
                                      positional="none"),
    "llama-like": TransformerConfig(arch="decoder-only", N=2, M=5, E=16, nhead=4, nhead_kv=2, vocab_size=20,
                                    layers=2, positional="rope", norm="rmsnorm", activation="swiglu", norm_first=True,
                                    bias=False),
    "pre-norm encoder-decoder, MQA": TransformerConfig(N=2, M=5, M_target=4, E=16, nhead=4, nhead_kv=1, vocab_size=20,
                                                       layers=2, norm_first=True, positional="learned"),
}


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_family_s_figure_labels_its_arrows_with_live_shapes_inside_the_picture(name):
    cfg = FAMILIES[name]
    tt = trace(cfg)
    f = figure(cfg)
    svg = architecture_svg(cfg, tt.shapes)
    labels = arrows(svg)
    assert list(labels) == [(a.tail, a.head) for a in f.arrows]
    assert list(labels.values()) == [shape_text(edge_shape(a.hook, tt.shapes)) for a in f.arrows]
    assert len(architecture_steps(cfg, tt.shapes)) == len(f.arrows)
    assert {a.tail for a in f.arrows} | {a.head for a in f.arrows} == set(f.boxes)  # no box left unconnected
    root = ElementTree.fromstring(svg)
    for rect in root.iter(f"{SVG}rect"):
        x, y, w, h = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
        assert 0 <= x and x + w <= WIDTH and 0 <= y and y + h <= f.height
    legend = "".join(root.find(f"{SVG}text[@class='legend']").itertext())
    for line in f.legend:
        assert line in legend


def test_a_single_stack_has_no_encoder_decoder_parts():
    for name in ("decoder-only", "encoder-only", "llama-like"):
        f = figure(FAMILIES[name])
        words = " ".join(" ".join(b.lines) + " " + b.spoken for b in f.boxes.values())
        assert "cross" not in words.lower() and "shifted right" not in words and "√E" not in words
        assert len({b.x for b in f.boxes.values() if not b.side}) == 1  # one column
    assert [label for label, *_ in figure(FAMILIES["decoder-only"]).frames] == ["Layer × 2"]
    assert "Masked multi-head" in figure(FAMILIES["decoder-only"]).boxes["dec_self"].lines
    assert "Multi-head" in figure(FAMILIES["encoder-only"]).boxes["enc_attn"].lines


def test_pre_norm_puts_a_norm_before_each_sub_layer_and_a_final_norm_after_the_stack():
    f = figure(FAMILIES["llama-like"])
    into = {a.head: a.tail for a in f.arrows if not a.residual and not f.boxes[a.tail].side}
    assert f.boxes[into["dec_self"]].lines == ("RMSNorm",) and f.boxes[into["dec_ffn"]].lines == ("RMSNorm",)
    assert f.boxes[into["linear"]].lines == ("Final RMSNorm",)
    residual = [(a.tail, a.head) for a in f.arrows if a.residual]
    assert [f.boxes[head].kind for _, head in residual] == ["plus", "plus"]  # the sum after each sub-layer
    post = figure(FAMILIES["decoder-only"])
    assert [post.boxes[a.head].lines for a in post.arrows if a.residual] == [("Add & Norm",), ("Add & Norm",)]
    assert "dec_final" not in post.boxes
    encdec = figure(FAMILIES["pre-norm encoder-decoder, MQA"])
    assert {"enc_final", "dec_final"} <= set(encdec.boxes)
    assert [a for a in encdec.arrows if a.head == "dec_cross" and a.role.startswith(" as the memory")][0].tail \
        == "enc_final"


def test_gqa_and_mqa_say_which_query_heads_share_a_k_v_head():
    llama = figure(FAMILIES["llama-like"])
    assert "K/V: nhead_kv = 2 heads shared by groups of 4/2 = 2 query heads (GQA)" in llama.legend
    assert llama.boxes["dec_self"].lines == ("Masked self-attention", "GQA: 2 K/V for 4 Q")
    mqa = figure(FAMILIES["pre-norm encoder-decoder, MQA"])
    assert "K/V: 1 head shared by all nhead = 4 query heads (MQA)" in mqa.legend
    assert "Attention: nhead = 3 heads, each with its own K and V (MHA)" in figure(CFG).legend


def test_the_figure_names_rmsnorm_swiglu_and_rope_where_they_are():
    cfg = FAMILIES["llama-like"]
    f = figure(cfg)
    assert f.boxes["dec_ffn"].lines == ("Feed forward, SwiGLU", "E → d_ff (gate · up) → E")
    [rope] = [a for a in f.arrows if a.tail == "tgt_rope"]
    assert rope.head == "dec_self" and edge_shape(rope.hook, trace(cfg).shapes) == (5, 4)  # (M, d_k)
    assert "tgt_pos" not in f.boxes and "tgt_add" not in f.boxes  # RoPE adds nothing to the embeddings
    none = figure(FAMILIES["encoder-only"])
    assert not any(b.side for b in none.boxes.values())
    assert "Positions: none (nothing tells the positions apart)" in none.legend


@pytest.mark.parametrize("arch, title", [
    ("decoder-only", "The decoder-only Transformer: one of its 2 layers"),
    ("encoder-only", "The encoder-only Transformer: its single layer"),
])
def test_a_single_stack_s_title_counts_its_layers(arch, title):
    cfg = TransformerConfig(arch=arch, layers=2 if arch == "decoder-only" else 1)
    assert architecture_title(cfg) == f"{title}, every arrow labelled with the shape of the tensor it carries"


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only", "encoder-only"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("positional", ["sinusoidal", "learned", "rope", "none"])
def test_no_two_boxes_of_any_family_overlap_and_the_legend_clears_them(arch, norm_first, positional):
    """Every part a learner can toggle moves boxes: none may sit on another, nor under the legend's lines."""
    cfg = TransformerConfig(arch=arch, norm_first=norm_first, positional=positional, E=16, nhead=4, nhead_kv=2)
    f = figure(cfg)

    def extent(box):
        w, h = (11, 11) if box.kind == "plus" else ((55 if box.side else 75), 17)
        return box.x - w, box.y - h, box.x + w, box.y + h

    boxes = [extent(b) for b in f.boxes.values()]
    for i, (ax0, ay0, ax1, ay1) in enumerate(boxes):
        assert 0 <= ax0 and ax1 <= WIDTH and 0 <= ay0 and ay1 <= f.height
        for bx0, by0, bx1, by1 in boxes[i + 1:]:
            assert ax1 <= bx0 or bx1 <= ax0 or ay1 <= by0 or by1 <= ay0, (cfg, (ax0, ay0), (bx0, by0))
    longest = max(map(len, f.legend)) * 5.6  # 10 px Helvetica, about, per character
    legend = (f.legend_x, 10, f.legend_x + longest, 22 + 14 * (len(f.legend) - 1) + 4)
    assert legend[2] <= WIDTH
    for x0, y0, x1, y1 in boxes:
        assert x1 <= legend[0] or legend[2] <= x0 or y1 <= legend[1] or legend[3] <= y0, (cfg, (x0, y0))
