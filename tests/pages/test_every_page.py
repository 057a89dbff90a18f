"""Every page of the navigation renders, at the default config and at the extremes."""

from __future__ import annotations

import json
import re

import pytest

from core import PAPER_BIG, PRESETS
from tests.support.apptest import make_app, open_page, running
from tests.support.configs import ENC_DEC_AT_GPT3_WIDTHS
from tests.support.links import config_link

PAGES = ["pages/explorer.py", "pages/attention.py", "pages/positional.py", "pages/quiz.py", "pages/training_lab.py",
         "pages/decoding.py", "pages/cost.py", "pages/compare.py"]
GPT3 = next(name for name in PRESETS if name.startswith("GPT-3"))


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_without_exception(page):
    at = make_app().run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.title, "every page has a title"
    # The shared sidebar is there on every page, and moving it keeps the page alive.
    at.sidebar.slider(key="w_N").set_value(3).run()
    assert not at.exception, at.exception
    assert running(at).N == 3


def heading_levels(node) -> list[int]:
    """The levels of the headings (st.title h1, st.header h2, ...) under a block, in page order."""
    tag = getattr(node, "tag", None) if getattr(node, "type", None) in ("title", "header", "subheader") else None
    levels = [int(tag[1])] if tag else []
    for child in getattr(node, "children", {}).values():
        levels += heading_levels(child)
    return levels


@pytest.mark.parametrize("page", PAGES)
def test_every_pages_headings_go_down_one_level_at_a_time(page):
    """A screen reader's list of headings is a page's outline: one h1, and no level skipped below
    it (the quiz's questions were h3 straight under the page's h1)."""
    at = make_app().run()
    at.switch_page(page).run()
    levels = heading_levels(at.main)
    assert levels[:1] == [1] and levels.count(1) == 1, levels
    assert all(b <= a + 1 for a, b in zip(levels, levels[1:])), levels


@pytest.mark.parametrize("page", PAGES[:3])
def test_my_pages_survive_a_shape_only_preset(page):
    at = make_app().run()
    at.switch_page(page).run()
    at.sidebar.selectbox(key="w_preset").set_value(GPT3).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    if page.endswith("positional.py"):  # its tables need no pass: no "no values were computed" there
        assert not any("Shape-only pass" in w.value for w in at.warning)
        assert any("This page needs no pass" in i.value for i in at.info)
    else:
        assert any("Shape-only pass" in w.value for w in at.warning)


def test_attention_page_every_kind_and_the_mask():
    at = make_app({"M_target": "4"}).run()  # M = 8: each kind's map has its own shape
    at.switch_page("pages/attention.py").run()
    assert at.selectbox(key="a_item").value == 1  # the padded (last) sequence is shown first
    shapes = {"encoder self-attention": (8, 8), "decoder masked self-attention": (4, 4), "cross-attention": (4, 8)}
    for kind, shape in shapes.items():
        at.radio(key="a_kind").set_value(kind).run()
        assert not at.exception, at.exception
        captions = " ".join(c.value for c in at.caption)
        assert "largest weight on a blocked cell is 0:" in captions, kind
        assert len(at.get("vega_lite_chart")) == 2
        numbers = at.table[0].value  # the expander under the heatmap: one row per query, one column per key
        assert numbers.shape == shape and numbers.index[-1] == f"query {shape[0] - 1}", kind
        assert abs(numbers.sum(axis=1) - 1).max() < 1e-5  # every query's weights sum to 1


def test_attention_page_keeps_choices_in_range_when_the_config_shrinks():
    at = make_app({"layers": "3", "nhead": "4", "E": "16", "N": "4"}).run()
    at.switch_page("pages/attention.py").run()
    at.selectbox(key="a_layer").set_value(2).run()
    at.selectbox(key="a_head").set_value(3).run()
    at.sidebar.slider(key="w_layers").set_value(1).run()
    at.sidebar.select_slider(key="w_nhead").set_value(2).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="a_layer").value == 0
    assert at.selectbox(key="a_head").value == 0


def test_attention_choices_outlast_a_visit_elsewhere_and_shrink_with_the_config_there():
    at = make_app({"layers": "3", "nhead": "4", "E": "16", "N": "4"}).run()
    at.switch_page("pages/attention.py").run()
    at.selectbox(key="a_layer").set_value(2).run()
    at.selectbox(key="a_head").set_value(3).run()
    at.switch_page("pages/explorer.py").run()
    at.switch_page("pages/attention.py").run()
    assert (at.selectbox(key="a_layer").value, at.selectbox(key="a_head").value) == (2, 3)
    at.switch_page("pages/explorer.py").run()  # the config shrinks while the attention page is away
    at.sidebar.slider(key="w_layers").set_value(1).run()
    at.sidebar.select_slider(key="w_nhead").set_value(2).run()
    at.switch_page("pages/attention.py").run()
    assert not at.exception, at.exception
    assert (at.selectbox(key="a_layer").value, at.selectbox(key="a_head").value) == (0, 0)


def test_no_values_to_draw_names_the_kind_a_link_chose():
    """Shape-only, the page said 'Each encoder self-attention layer's weights would be (N, nhead, M, M)'
    whatever the kind: a link to a large model's cross-attention got the encoder's shape."""
    at = make_app({"N": "64", "M": "4096", "M_target": "512", "E": "1024", "nhead": "16", "kind": "cross"})
    at.switch_page("pages/attention.py").run()  # opened on the link, as a browser opens /attention?...
    assert not at.exception
    assert any("Each cross-attention layer's weights would be (64, 16, 512, 4096) = 2,147,483,648 numbers "
               "(8.0 GiB)" in i.value for i in at.info), [i.value for i in at.info]


def test_attention_page_says_when_there_are_no_values():
    """Not even a slim pass fits: the page says why, and names the sliders that shrink a slim pass (it
    once named the whole pass's, and at GPT-2's sizes said to lower N and layers, which change nothing)."""
    at = make_app(config_link(ENC_DEC_AT_GPT3_WIDTHS))
    at.switch_page("pages/attention.py").run()
    assert any("No values to draw" in i.value for i in at.info)
    assert not at.get("vega_lite_chart")
    assert any("A slim pass, one sequence with one layer at a time in memory, would need about 28.0 GiB, over the "
               "256.0 MiB budget. Its largest part is one sequence's other activations, 10.0 GiB: lowering M, "
               "M_target, E, d_ff and nhead shrinks it most." in i.value for i in at.info), [i.value for i in at.info]
    # A vocabulary whose table takes the whole budget: its table is named, with the sliders that shrink it.
    at.sidebar.selectbox(key="w_preset").set_value("Paper big (E=1024, 6+6 layers)").run()  # 214 M weights
    at.sidebar.select_slider(key="w_vocab_size").set_value(65536).run()  # 256 MiB of table, before any activations
    assert any("No values to draw" in i.value for i in at.info), [i.value for i in at.info]
    assert any("Its largest part is its token table, 256.0 MiB: lowering vocab_size and E shrinks it most."
               in i.value for i in at.info), [i.value for i in at.info]
    # Within the budget a layer at a time, but 24 + 24 layers of E = 1024 are too many weights to draw.
    at.sidebar.select_slider(key="w_vocab_size").set_value(37000).run()
    at.sidebar.slider(key="w_layers").set_value(24).run()
    assert any("would draw 743 million weights for the deepest map, more than the 300 million it may draw "
               "(about a second): lowering layers, E and d_ff shrinks that." in i.value for i in at.info), \
        [i.value for i in at.info]


def drawn_map(at) -> tuple[str, list[float]]:
    """The weights heatmap's description and its weights, cell by cell, as the page sent them."""
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    return spec["description"], [cell["weight"] for cell in spec["layer"][0]["data"]["values"]]


def test_attention_page_draws_the_paper_big_model_from_a_slim_pass(monkeypatch):
    """Over the budget (838 MiB) but one sequence through one layer at a time fits: the maps are drawn,
    the page says how, and a pick of kind, layer and head draws that map, the slim pass's own, after the
    pass waited its turn at the memory gate the whole traces share."""
    from core.slim import slim_bytes
    from core.views import slim_attention_maps
    from ui.compute.trace_cache import GATE

    reserved = []
    reserve = GATE.reserve
    monkeypatch.setattr(GATE, "reserve", lambda nbytes: reserved.append(nbytes) or reserve(nbytes))
    at = make_app().run()
    at.switch_page("pages/attention.py").run()
    reserved.clear()  # the default model's own trace reserves too unless an earlier test cached it
    at.sidebar.selectbox(key="w_preset").set_value("Paper big (E=1024, 6+6 layers)").run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("**A slim pass.** A whole pass of this model would need about 838.0 MiB" in i.value
               for i in at.info), [i.value for i in at.info]
    assert not any("No values to draw" in i.value for i in at.info)
    assert not any("Shape-only pass" in w.value for w in at.warning)
    assert len(at.get("vega_lite_chart")) == 2  # the weights and the mask
    assert drawn_map(at)[0].startswith("Heatmap of the encoder self-attention weights of layer 0, head 0, ")
    at.radio(key="a_kind").set_value("cross-attention").run()
    at.selectbox(key="a_layer").set_value(5).run()
    at.selectbox(key="a_head").set_value(15).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("vega_lite_chart")) == 2
    description, weights = drawn_map(at)
    assert description.startswith("Heatmap of the cross-attention weights of layer 5, head 15, batch item 0")
    want = slim_attention_maps(PAPER_BIG, "cross-attention", 5, 0)[15].weights
    assert weights == pytest.approx([w for row in want for w in row], rel=1e-6, abs=1e-7)  # float32 rounding
    assert reserved and set(reserved) == {slim_bytes(PAPER_BIG)}, reserved


def test_attention_page_caps_long_sequences():
    at = make_app({"M": "128", "E": "8", "nhead": "2", "N": "1", "layers": "1", "vocab_size": "10"}).run()
    at.switch_page("pages/attention.py").run()
    assert not at.exception, at.exception
    assert any("first 64 of 128 queries" in c.value for c in at.caption)


def test_positional_page_learned_and_sinusoidal():
    at = make_app({"positional": "learned"}).run()
    at.switch_page("pages/positional.py").run()
    assert not at.exception, at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "the traced model's own table" in text
    assert "computed from the formula" in text
    at.multiselect(key="p_dims_16").set_value([0, 15]).run()
    assert not at.exception, at.exception


def test_the_curves_with_no_dimension_chosen_say_so_instead_of_drawing_empty_axes():
    at = make_app().run()
    at.switch_page("pages/positional.py").run()
    curves = at.tabs[1]
    assert len(curves.get("vega_lite_chart")) == 1 and not curves.info
    at.multiselect(key="p_dims_16").set_value([]).run()
    assert not at.exception, at.exception
    curves = at.tabs[1]
    assert not curves.get("vega_lite_chart")
    assert [i.value for i in curves.info] == [
        "No dimension is chosen, so there is no curve to draw: pick up to 8 in the box above."]
    at.sidebar.select_slider(key="w_E").set_value(4).run()  # four dimensions in all
    at.multiselect(key="p_dims_4").set_value([]).run()
    assert [i.value for i in at.tabs[1].info] == [
        "No dimension is chosen, so there is no curve to draw: pick up to 4 in the box above."]


def test_the_positional_heatmap_says_its_formula_and_how_to_read_its_stripes():
    """The table's tab said 'computed from the formula' with the formula only on the next tab."""
    at = make_app().run()
    at.switch_page("pages/positional.py").run()
    captions = " ".join(c.value for c in at.tabs[0].caption)
    assert "Dimension 2i holds sin(p / 10000^(2i/E)) and dimension 2i + 1 its cosine" in captions
    at = make_app({"positional": "learned"}).run()
    at.switch_page("pages/positional.py").run()
    assert "10000" not in " ".join(c.value for c in at.tabs[0].caption)  # a learned table has no formula


@pytest.mark.parametrize("E, slow", [("1", None), ("2", False), ("4", True), ("16", True)])
def test_the_positional_table_claims_slow_dimensions_only_where_there_are_some(E, slow):
    """'The right ones stay near 0 (sine) and 1 (cosine)' was said at every E: at E = 2 the one cosine
    reads 1, 0.54, -0.42, -0.99 over positions 0 to 3, and E = 1 has no cosine at all."""
    at = open_page("positional", {"E": E, "nhead": "1", "M": "8"})
    captions = " ".join(c.value for c in at.tabs[0].caption)
    assert ("stay near 0 (sine) and 1 (cosine)" in captions) is bool(slow)
    assert ("no room for a cosine" in captions) is (slow is None)


@pytest.mark.parametrize("E, M", [("1", "8"), ("2", "8"), ("16", "64"), ("512", "64"), ("16", "1")])
def test_the_comparison_reads_the_learned_tables_likeness_off_its_map(E, M):
    """'Only each position with itself is alike' was false at small E: at E = 2 two different random
    positions scored 0.995. The caption gives the map's own highest score between two positions."""
    from core import TransformerConfig
    from core.views import most_alike_pair, positional_view

    at = open_page("positional", {"E": E, "nhead": "1", "M": M, "tab": "compare"})
    cfg = running(at)
    assert cfg == TransformerConfig(N=cfg.N, M=int(M), E=int(E), nhead=1, vocab_size=cfg.vocab_size)
    captions = " ".join(c.value for c in at.tabs[2].caption)
    assert "only each position with itself is alike" not in captions
    most = most_alike_pair(positional_view(cfg, "learned"))
    if most is None:
        assert "alike only by chance." in captions
    else:
        assert f"at E = {E}, the most alike two different positions score {most:.2f}." in captions


def test_the_comparison_says_why_position_0_is_blank_at_E_1_and_shows_no_nan():
    """At E = 1 the sinusoidal position 0 is the zero vector, so its similarity with itself is
    undefined: it was drawn as 0, unlike itself, beside a caption that says each position is most
    alike with itself. The map leaves it blank and a caption says why; nothing on the page reads "nan"."""
    at = open_page("positional", {"E": "1", "M": "1", "tab": "compare"})
    assert not at.exception and not at.error and not at.warning
    compare = at.tabs[2]
    captions = [c.value for c in compare.caption]
    assert ("The sinusoidal vector of position 0 is all zeros (at E = 1 its only dimension is sin(0) = 0). A zero "
            "vector has no direction, so its cosine similarity with any position, itself included, is undefined "
            "(0 / 0): its row and column in the similarity map are left blank, in a dashed outline.") in captions
    nan = re.compile(r"\bnan\b", re.IGNORECASE)  # as json.dumps writes a NaN (no JSON), or str() does
    specs = [chart.proto.spec for chart in at.get("vega_lite_chart")]
    assert len(specs) == 6 and not any(nan.search(spec) for spec in specs)  # each tab's charts
    assert not any(nan.search(str(e.value)) for kind in ("caption", "markdown") for e in at.get(kind))
    for query in ({"E": "2", "M": "8", "tab": "compare"}, {"E": "16", "M": "64", "positional": "learned"}):
        at = open_page("positional", query)
        assert not at.exception and not any("all zeros" in c.value for c in at.caption), query


def test_positional_page_bounded_at_huge_sizes():
    at = make_app({"M": "4096", "E": "12288", "nhead": "96", "N": "1", "layers": "1"}).run()
    at.switch_page("pages/positional.py").run()
    assert not at.exception, at.exception
    assert any("first 64 of M = 4,096 positions" in c.value for c in at.caption)
    numbers = at.table[0].value  # the heatmap's numbers: as capped as the heatmap itself
    assert numbers.shape == (64, 64) and numbers.index[-1] == "position 63"
    # Whole (sine, cosine) pairs, one frequency in 192, as drawn: the last is pair 31 x 192.
    assert list(numbers.columns[:4]) == ["dim 0", "dim 1", "dim 384", "dim 385"]
    assert numbers.columns[-1] == f"dim {2 * 31 * 192 + 1}"
    assert any("of one frequency in 192, 64 of E = 12288 dimensions" in c.value for c in at.caption)


@pytest.mark.parametrize("query, padded", [({"N": "2", "M": "8"}, True), ({"N": "2", "M": "3", "M_target": "3"}, False),
                                           ({"N": "1", "M": "8"}, False)])
def test_the_mask_note_says_whether_this_batch_has_any_padding(query, padded):
    at = make_app(query).run()
    at.switch_page("pages/attention.py").run()
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption)
    if padded:
        assert "The trace pads the last 2 of the M = 8 positions of the last sequence" in captions
        # The padded sequence is the one shown first: the note points at its keys, and asks the
        # learner to pick it only once another sequence is on show.
        assert "the batch item shown: keys 6 to 7 are blocked" in captions
        assert "pick the last batch item" not in captions
        at.selectbox(key="a_item").set_value(0).run()
        captions = " ".join(c.value for c in at.caption)
        assert "so pick the last batch item (1) to see it" in captions
    else:
        assert "no token is padding, so this mask hides nothing" in captions
        assert "pick the last batch item" not in captions


def test_the_attention_page_says_its_model_is_untrained():
    """A newcomer reads meaning into a random model's pattern unless told there is none yet."""
    at = make_app().run()
    at.switch_page("pages/attention.py").run()
    assert "This model is untrained (random weights, random token ids)" in at.caption[0].value
    assert "The Training lab shows where a trained model looks." in at.caption[0].value


def test_a_capped_map_says_the_padding_lies_past_the_keys_drawn():
    """At M = 256 the map shows the first 64 keys; the last sequence's padding is keys 192 to 255."""
    at = make_app({"M": "256", "M_target": "256"}).run()
    at.switch_page("pages/attention.py").run()
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "Nothing is masked here" not in captions
    assert "This sequence's 64 padding keys come after them, at keys 192 to 255" in captions
    assert "keys 192 to 255: past the first 64 keys drawn here" in captions


@pytest.mark.parametrize("E", ["1", "2", "4"])
def test_the_curves_and_the_comparison_say_only_what_holds_at_small_E(E):
    """At E = 1 there is no cosine, at E = 2 a single frequency, so 'low dimensions turn fast, high ones
    slowly' did not hold; and at E = 1 every pair of positions scores +1 or -1, so 'sinusoids make nearby
    positions alike' did not either (neighbours 3 and 4 score -1)."""
    from core import TransformerConfig
    from core.views import positional_view

    at = open_page("positional", {"E": E, "nhead": "1", "M": "8"})
    curves = " ".join(c.value for c in at.tabs[1].caption)
    compare = " ".join(c.value for c in at.tabs[2].caption)
    assert ("Low dimensions turn fast, high ones slowly" in curves) is (E == "4")
    assert ("Sinusoids make nearby positions alike" in compare) is (E != "1")
    if E == "1":
        similarity = positional_view(TransformerConfig(N=2, M=8, E=1, nhead=1, vocab_size=100), "sinusoidal").similarity
        assert similarity[3][4] == pytest.approx(-1) and similarity[1][7] == pytest.approx(1)
        assert "no cosine, and no slower frequency" in curves and "nearness does not show" in compare
