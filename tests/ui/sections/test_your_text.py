"""The "Your text" box on the Explorer and the Attention page: a typed text sets row 1, the sidebar says which
sizes it set, limits are said, and no text the learner types breaks the page or becomes markup."""

from __future__ import annotations

import json

import pytest

from core import trace
from core.tokens import MAX_TOKENS, text_config, tokenize
from render.markdown import as_literal
from tests.support.apptest import make_app, open_page, running, sliders
from ui.sections.your_text import LABEL, MAX_LINK_CHARS, TEXT_KEY

HOSTILE = {
    "html": "<b>x</b> <script>alert(1)</script> <img src=x onerror=alert(2)>",
    "markdown": "**bold** [link](javascript:alert(1)) $x$ :material/home: <br>",
    "long": "word " * 2000,  # 10,000 characters, 4,000 word tokens: cut at MAX_TOKENS
    "control": "a\x07b\x1b[31mc\td\re\x00f",
    "right-to-left": "שלום עולם \u202eevil\u202c مرحبا",
    "emoji": "🙂 family: 👨‍👩‍👧‍👦 flags 🇫🇷",
}


def typed(at, text: str, level: str = "words"):
    at.radio(key="yt_level").set_value(level)
    at.text_area(key=TEXT_KEY).input(text).run()
    assert not at.exception, at.exception
    return at


def table_shape(at, row: int) -> str:
    """Row ``row``'s live shape in the Explorer's table of the pass."""
    table = next(d.value for d in at.dataframe if "live shape" in getattr(d.value, "columns", ()))
    return table["live shape"][row - 1]


def test_the_box_is_labelled_your_text():
    at = make_app().run()
    assert at.text_area(key=TEXT_KEY).label == LABEL and LABEL.startswith("Your text")


@pytest.mark.parametrize("level, M, vocab", [("words", 11, 7), ("characters", 22, 11)])
def test_a_typed_text_becomes_row_1(level, M, vocab):
    at = typed(make_app().run(), "the cat sat on the mat", level)
    cfg = sliders(at)  # the sidebar's own config is left as it was
    assert (cfg.N, cfg.M) == (2, 8)
    assert table_shape(at, 1) == f"(1, {M})"
    assert table_shape(at, 14) == f"(1, {M}, {vocab})"
    shown = {w.key: (w.value, w.disabled) for w in (*at.sidebar.slider, *at.sidebar.select_slider)}
    assert (shown["shown_N"], shown["shown_M"], shown["shown_vocab_size"]) == ((1, True), (M, True), (vocab, True))
    assert [i.value for i in at.sidebar.info] == ["Your text on this page sets N, M, M_target and vocab_size."]


def test_each_line_is_a_sequence_and_other_sliders_still_work():
    at = typed(make_app().run(), "the cat\nsat on the mat")
    assert table_shape(at, 1) == "(2, 7)"
    at.sidebar.select_slider(key="w_E").set_value(32).run()
    assert not at.exception
    assert table_shape(at, 2) == "(2, 7, 32)"


def test_a_target_text_sets_M_target():
    at = make_app().run()
    at.text_input(key="yt_target").input("le chat")
    at = typed(at, "the cat sat")
    tok = tokenize("the cat sat", "word", "le chat")
    assert table_shape(at, 12) == "(1, 3, 16)"  # the target: <start>, le, ␣ (the last token is never read)
    assert table_shape(at, 14) == f"(1, 3, {tok.vocab_size})"


def test_a_text_with_no_tokens_gets_a_message_and_the_page_keeps_its_sizes():
    at = typed(make_app().run(), "\n\n\n")
    assert any("no tokens" in w.value for w in at.warning)
    assert table_shape(at, 1) == "(2, 8)"


def test_a_text_too_long_for_a_link_says_so_and_a_short_one_does_not():
    at = typed(make_app().run(), "x" * (MAX_LINK_CHARS + 1))
    assert any("cannot be shared by link" in c.value for c in at.caption)
    at = typed(at, "a short one")
    assert not any("cannot be shared by link" in c.value for c in at.caption)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_text_leaves_the_explorer_working(name):
    at = typed(make_app().run(), HOSTILE[name])
    tok = tokenize(HOSTILE[name], "word")
    assert table_shape(at, 1) == f"({tok.N}, {tok.M})"
    if name == "long":
        assert tok.M == MAX_TOKENS
        assert any(f"cut at {MAX_TOKENS} tokens" in w.value for w in at.warning)
    for element in (*at.markdown, *at.caption, *at.warning):
        assert "<script" not in element.value and "<b>" not in element.value


@pytest.mark.parametrize("name", ["html", "control", "right-to-left"])
def test_hostile_text_leaves_the_attention_page_working(name):
    at = open_page("attention", {})
    at = typed(at, HOSTILE[name])
    tok = tokenize(HOSTILE[name], "word")
    assert sliders(at).N == 2  # the sidebar's sizes stay; the page runs the text's
    assert running(at) == text_config(sliders(at), tok)


def test_the_values_shown_are_the_live_tensors_of_the_pass_over_the_text():
    at = typed(make_app().run(), "the cat sat on the mat")
    at.toggle(key="x_values").set_value(True).run()
    assert not at.exception
    tok = tokenize("the cat sat on the mat", "word")
    t = trace(text_config(sliders(at), tok), text=tok)
    labels = ["0 the", "1 ␣", "2 cat", "3 ␣", "4 sat", "5 ␣", "6 on", "7 ␣", "8 the", "9 ␣", "10 mat"]
    shown = [d.value for d in at.dataframe if list(d.value.index) == labels]

    def on_the_page(tensor) -> bool:
        return any(frame.values.tolist() == tensor.tolist() for frame in shown)

    assert on_the_page(t.tensors["src.embed"][0])  # row 2, (1, 11, 16): whole
    assert on_the_page(t.tensors["enc.0.self_attn.q"][0, 0])  # row 5: head 0's Q
    assert on_the_page(t.tensors["enc.0.self_attn.weights"][0, 1])  # row 6 (N, nhead, M, M): head 1 too
    assert any(list(frame.columns) == labels for frame in shown)  # the map's keys are the tokens as well
    ids = next(d.value for d in at.dataframe if list(d.value.index) == ["sequence 0"])
    assert ids.values.tolist() == [tok.ids(tok.source[0])]
    assert any("untrained (random weights)" in c.value for c in at.caption)


def test_the_step_through_shows_operands_that_make_the_row():
    """Row 5 = X · W^Q_0 + b^Q_0: the three tables beside the row, combined so, give the row's table."""
    import numpy as np

    at = typed(make_app().run(), "the cat sat on the mat")
    at.toggle(key="x_steps").set_value(True).run()
    rows = [s for s in at.select_slider(key="x_step").options]
    at.select_slider(key="x_step").set_value(next(i for i, r in enumerate(rows) if r == "row 5")).run()
    assert not at.exception
    assert at.subheader[-1].value.startswith("Row 5")
    frames = [d.value for d in at.dataframe]
    extras = max(i for i, f in enumerate(frames) if "live shape" in f.columns)  # the step's tables come after it
    x, w, b, q = (np.array(f.values, dtype=float) for f in frames[extras + 1:])
    assert x.shape == (11, 16) and w.shape == (16, 8) and q.shape == (11, 8)
    np.testing.assert_allclose(x @ w + b.reshape(1, -1), q, rtol=1e-5, atol=1e-5)


def test_the_attention_page_switches_to_the_lab_s_trained_model_and_its_map_forms_the_anti_diagonal():
    """After a reversal run (kept for the session, as the Training lab keeps it), the mirror half's queries look
    back at the token each copies: position M/2 + j at M/2 + 1 - j, BOS at 0. The page's own map is the trained
    model's, its numbers table labelled with the task's tokens."""
    from core.train import ReversalSettings, train_reversal

    res = train_reversal(ReversalSettings(), keep_model=True)
    at = open_page("attention", {})
    at.session_state["lab_trained"] = res.trained
    at.run()
    at.radio(key="yt_model").set_value("trained in the Training lab").run()
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert any(as_literal(res.trained.weights) in c for c in captions)  # as the page writes it, beside the map
    assert any("anti-diagonal" in c for c in captions)
    assert not any("random token ids" in c for c in captions)  # the intro no longer says the ids are random
    weights = main_numbers(at)  # the map over the task's sequence, rows and columns its tokens
    assert list(weights.index) == list(weights.columns) and weights.index[0] == "0 <start>"
    M = len(weights)
    peaks = weights.values.argmax(axis=1)
    assert [int(p) for p in peaks[M // 2:]] == [M // 2 - j for j in range(M // 2)]


def main_numbers(at):
    """The numbers behind the Attention page's weights heatmap: the one table whose rows are its columns."""
    return next(t for t in tables_on(at) if len(t) and list(t.index) == list(t.columns))


def tables_on(at):
    """Every st.table's frame (a Styler's data)."""
    return [getattr(t.value, "data", t.value) for t in at.table]


def test_the_attention_page_draws_its_maps_over_your_text_with_the_tokens_as_labels():
    """The page's own map, mask and numbers table come from the pass over the text: no second map below."""
    at = typed(open_page("attention", {}), "the cat sat on the mat")
    tok = tokenize("the cat sat on the mat", "word")
    cfg = text_config(sliders(at), tok)
    t = trace(cfg, text=tok)
    numbers = main_numbers(at)
    labels = ["0 the", "1 ␣", "2 cat", "3 ␣", "4 sat", "5 ␣", "6 on", "7 ␣", "8 the", "9 ␣", "10 mat"]
    assert list(numbers.index) == labels and list(numbers.columns) == labels
    assert numbers.values.tolist() == t.tensors["enc.0.self_attn.weights"][0, 0].tolist()
    charts = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    weights, mask = charts[:2]
    for spec in (weights, mask):
        cells = spec["layer"][0]["data"]["values"]
        assert [c["key"] for c in cells[:len(labels)]] == labels
        assert spec["layer"][0]["encoding"]["x"]["sort"] == labels
    assert len(charts) == 2  # the text's map is the page's map: none drawn twice
    assert not [h.value for h in at.header if "Your text's attention" in h.value]


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only", "encoder-only"])
def test_every_kind_of_map_over_a_text_is_labelled_with_its_own_tokens(arch):
    """Queries come from their own stack (the decoder reads the text shifted right behind the start token),
    cross-attention's keys from the source."""
    at = typed(open_page("attention", {"arch": arch}), "the cat sat")
    source, shifted = ["0 the", "1 ␣", "2 cat", "3 ␣", "4 sat"], ["0 <start>", "1 the", "2 ␣", "3 cat", "4 ␣"]
    expected = {"encoder self-attention": (source, source), "self-attention": (source, source),
                "decoder masked self-attention": (shifted, shifted), "cross-attention": (shifted, source),
                "causal self-attention": (source, source)}
    kinds = at.radio(key="a_kind").options if arch == "encoder-decoder" else [None]
    for kind in kinds:
        if kind is not None:
            at.radio(key="a_kind").set_value(kind).run()
        assert not at.exception, at.exception
        numbers = next(t for t in tables_on(at) if list(t.columns)[:1] in (["0 the"], ["0 <start>"]))
        shown = kind or next(k for k in expected if any(k.capitalize() in m.value for m in at.markdown))
        assert (list(numbers.index), list(numbers.columns)) == expected[shown], shown
        assert (numbers.sum(axis=1) - 1).abs().max() < 1e-5  # every row a softmax


def test_a_shorter_line_s_padding_is_named_in_the_mask_note():
    at = typed(open_page("attention", {}), "the cat sat on the mat\na dog")
    at.selectbox(key="a_item").set_value(1).run()
    assert not at.exception
    numbers = main_numbers(at)
    assert list(numbers.index)[-1].endswith("<pad>")
    assert any("Line 1 of your text is 3 tokens, padded to M = 11" in c.value for c in at.caption)


def test_with_no_text_the_map_keeps_its_positions():
    at = open_page("attention", {})
    assert not at.exception
    numbers = next(t for t in tables_on(at) if "query 0" in list(t.index))
    assert list(numbers.columns)[:2] == ["key 0", "key 1"]
    assert any("random token ids" in c.value for c in at.caption)


def test_untrained_weights_are_labelled_so_where_values_are_shown():
    at = typed(open_page("attention", {}), "the cat sat on the mat")
    assert any("untrained (random weights)" in c.value for c in at.caption)


@pytest.mark.slow  # every step of three families: a full run of the page each
@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only", "encoder-only"])
def test_values_and_every_step_render_over_a_text_in_every_family(arch):
    at = typed(make_app({"arch": arch}).run(), "the cat sat on the mat\nand a dog")
    at.toggle(key="x_values").set_value(True).run()
    at.toggle(key="x_steps").set_value(True).run()
    steps = at.select_slider(key="x_step").options
    assert len(steps) >= 10
    for i in range(len(steps)):
        at.select_slider(key="x_step").set_value(i).run()
        assert not at.exception
        assert at.subheader[-1].value.startswith(f"Row {steps[i].removeprefix('row ')},")
    assert not [e.value for e in at.error if "values" in e.value or "step-through" in e.value]
