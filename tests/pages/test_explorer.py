"""The explorer page: every slider at its ends, every preset, the URL's garbage, and the table's
live shapes against core.trace for the same config."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from core import PRESETS, TransformerConfig, trace
from render.diagram import shape_text
from render.tables import DESCRIPTION_CELL_CHARS, READ_ON, STACKED_COLUMN, cell_text, table_csv, table_file_name
from ui.link.config import FFS, LAYER_RANGE, LENGTHS, N_RANGE, VOCABS, WIDTHS, nhead_options
from tests.support.apptest import explorer_opened, figure_in_words, make_app, running

SLIDERS = {  # widget key -> (is a plain slider, minimum, maximum)
    "w_N": (True, *N_RANGE),
    "w_M": (False, LENGTHS[0], LENGTHS[-1]),
    "w_M_target": (False, LENGTHS[0], LENGTHS[-1]),
    "w_E": (False, WIDTHS[0], WIDTHS[-1]),
    "w_vocab_size": (False, VOCABS[0], VOCABS[-1]),
    "w_layers": (True, *LAYER_RANGE),
    "w_d_ff": (False, FFS[0], FFS[-1]),
}


def expected_shapes(cfg: TransformerConfig) -> list[str]:
    """What the table must say: the shapes core.trace reads off the model for this config."""
    return [shape_text(r.shape) for r in trace(cfg).rows]


def test_a_rows_code_is_drawn_once_its_box_is_opened():
    """A code box is the costliest element of a page load in the browser: closed, the page sends none."""
    at = make_app().run()
    [box] = [e for e in at.expander if e.label == "The code that produces it"]
    assert not [c for c in at.code if c.language == "python"] and not box.children
    at = explorer_opened(make_app(), code=True)
    assert row_code(at) == trace(running(at)).rows[4].code  # the row the box opens on


def row_code(at) -> str:
    """The code under 'Read a row whole' (the page's other code block is the table as Markdown)."""
    [block] = [c for c in at.code if c.language == "python"]
    return block.value


def assert_table_matches_trace(at) -> None:
    assert not at.exception, at.exception
    cfg = running(at)
    frame = at.dataframe[0].value
    assert list(frame["#"]) == [r.index for r in trace(cfg, shape_only=True).rows]  # 14 rows, 15 for a single stack
    assert list(frame["live shape"]) == expected_shapes(cfg)


def widget(at, key):
    plain = SLIDERS[key][0] if key in SLIDERS else False
    return at.sidebar.slider(key=key) if plain else at.sidebar.select_slider(key=key)


def test_default_table_equals_core_trace():
    at = make_app().run()
    assert_table_matches_trace(at)
    frame = at.dataframe[0].value
    assert list(frame.columns) == ["#", "tensor", "live shape", "formula", "elements", "memory", "description"]
    t = trace(running(at))
    assert list(frame["elements"]) == [r.numel for r in t.rows]
    assert list(frame["formula"]) == [r.formula for r in t.rows]
    assert frame["live shape"][5] == "(2, 2, 8, 8)"  # row 6: (N, nhead, M, M) at N=2, nhead=2, M=8


@pytest.mark.parametrize("key", list(SLIDERS))
def test_every_slider_at_its_min_and_max(key):
    at = make_app().run()
    _, low, high = SLIDERS[key]
    field = key[2:]
    for value in (low, high):
        widget(at, key).set_value(value).run()
        assert not at.exception, (key, value, at.exception)
        cfg = running(at)
        assert getattr(cfg, field) == value
        assert_table_matches_trace(at)


def test_nhead_slider_offers_only_divisors_of_E_at_both_ends():
    at = make_app().run()
    at.sidebar.select_slider(key="w_E").set_value(12).run()
    options = [int(o) for o in at.sidebar.select_slider(key="w_nhead").options]
    assert options == [1, 2, 3, 4, 6, 12]
    for value in (options[0], options[-1]):
        at.sidebar.select_slider(key="w_nhead").set_value(value).run()
        assert running(at).nhead == value
        assert running(at).d_k == 12 // value
        assert_table_matches_trace(at)
    # Moving E to a value that 12 heads do not divide snaps nhead to a divisor, never an error.
    at.sidebar.select_slider(key="w_E").set_value(10).run()
    assert not at.exception
    assert running(at).nhead in nhead_options(10)
    assert_table_matches_trace(at)


def test_stepping_E_through_a_prime_gives_back_the_heads_the_learner_chose():
    """Arrow keys step E by one. From E = 16 with 4 heads, E = 17 allows one head only, and E = 18 and
    20 kept that one: nhead snapped from the last snapped value instead of the 4 heads chosen."""
    at = make_app({"E": "16", "nhead": "4"}).run()
    seen = []
    for E in (17, 18, 19, 20):
        at.sidebar.select_slider(key="w_E").set_value(E).run()
        assert not at.exception
        seen.append(running(at).nhead)
    assert seen == [1, 3, 1, 4]  # 3 is the divisor of 18 nearest 4 (on a log scale, 3 before 6)
    at.sidebar.select_slider(key="w_nhead").set_value(2).run()  # a new choice is what E snaps from next
    at.sidebar.select_slider(key="w_E").set_value(21).run()
    at.sidebar.select_slider(key="w_E").set_value(24).run()
    assert running(at).nhead == 2


def test_a_link_or_back_that_snaps_nhead_keeps_the_heads_asked_for():
    """A link's nhead=4 at E=17, snapped to 1, and Back to an entry at E = 17 had both made 1 head the
    wanted number, so E = 20 next gave 1 head, not 4."""
    at = make_app({"E": "17", "nhead": "4"}).run()
    assert running(at).nhead == 1
    at.sidebar.select_slider(key="w_E").set_value(20).run()
    assert running(at).nhead == 4
    at = make_app({"E": "16", "nhead": "4"}).run()
    at.sidebar.select_slider(key="w_E").set_value(17).run()
    back = {name: at.query_params[name] for name in at.query_params}  # the history's entry at E = 17
    at.sidebar.select_slider(key="w_E").set_value(20).run()
    at.query_params.clear()
    at.query_params.update(back)
    with pytest.MonkeyPatch.context() as patch:  # Back: the run reads the entry's link
        patch.setattr("ui.sidebar.config.history_navigation", lambda: True)
        at.run()
    assert (running(at).E, running(at).nhead) == (17, 1)
    at.sidebar.select_slider(key="w_E").set_value(20).run()
    assert running(at).nhead == 4
    at = make_app({"E": "16", "nhead": "4"}).run()  # a preset's heads are the wanted ones from then on
    at.sidebar.selectbox(key="w_preset").set_value(next(n for n in PRESETS if n.startswith("Paper base"))).run()
    at.sidebar.select_slider(key="w_E").set_value(20).run()
    assert running(at).nhead == 10  # of 20's divisors, the nearest 8 (log scale: 10 before 5)
    # Even when the heads wanted before would snap to the preset's: 6 heads snap to 8 at E = 512.
    at = make_app({"E": "96", "nhead": "6"}).run()
    at.sidebar.selectbox(key="w_preset").set_value(next(n for n in PRESETS if n.startswith("Paper base"))).run()
    at.sidebar.select_slider(key="w_E").set_value(384).run()
    assert running(at).nhead == 8
    at = make_app({"E": "17"}).run()  # a link without nhead asks for the default's 2 heads
    at.sidebar.select_slider(key="w_E").set_value(20).run()
    assert running(at).nhead == 2


def test_the_preset_help_says_which_presets_tie_their_embeddings():
    """Paper base, Paper big, GPT-2 and GPT-3 share one matrix between the embeddings and the output
    layer; the help listed their sizes without it, and an untied Paper base has 101.0M weights, not 63.1M."""
    at = make_app().run()
    lines = at.sidebar.selectbox(key="w_preset").help.splitlines()
    assert "*tied*: one matrix for both embeddings and the output layer" in lines[0]
    for name, preset in PRESETS.items():
        [line] = [line for line in lines if line.startswith(f"- **{name}**")]
        assert line.endswith(", tied") == preset.tie_embeddings, line
    assert sum(line.endswith(", tied") for line in lines) == sum(p.tie_embeddings for p in PRESETS.values())


def test_the_divisors_caption_says_when_the_slider_offers_only_some():
    at = make_app().run()
    at.sidebar.select_slider(key="w_E").set_value(12).run()
    captions = [c.value for c in at.sidebar.caption]
    assert any(c.startswith("E = 12 splits evenly into nhead ∈ {1, 2, 3, 4, 6, 12}; d_k") for c in captions)
    at.sidebar.select_slider(key="w_E").set_value(256).run()  # 256 itself is a divisor the slider leaves out
    captions = [c.value for c in at.sidebar.caption]
    assert any("{1, 2, 4, 8, 16, 32, 64, 128, …} (the slider stops at 128); d_k" in c for c in captions)
    assert not at.exception and not at.sidebar.select_slider(key="w_nhead").disabled
    # E = 1: one choice, which a slider shows as a lone dot; greyed out, and said in words.
    at.sidebar.select_slider(key="w_E").set_value(1).run()
    assert at.sidebar.select_slider(key="w_nhead").disabled and running(at).nhead == 1
    assert "E = 1 has one divisor, so nhead = 1 is the only choice; a larger E offers more heads. d_k = 1." in [
        c.value for c in at.sidebar.caption]
    at.sidebar.select_slider(key="w_E").set_value(6).run()  # and back: the slider is live again
    assert not at.sidebar.select_slider(key="w_nhead").disabled
    at.sidebar.select_slider(key="w_nhead").set_value(3).run()
    assert running(at).nhead == 3 and not at.exception


def test_the_sidebar_says_when_a_step_of_E_moves_the_heads_the_learner_chose():
    """A newcomer stepped E from 16 to 15: nhead went from 2 to 3, and back at 16, with no word said, so the
    table's new head count went unnoticed. The caption under the slider now says so while it lasts."""
    at = make_app().run()
    note = ("nhead = 2, as set before, does not divide E = 15, so nhead is 3 for now, the nearest divisor; it goes "
            "back to 2 when E allows.")
    at.sidebar.select_slider(key="w_E").set_value(15).run()
    assert running(at).nhead == 3
    assert [c.value for c in at.sidebar.caption if c.value.startswith("E = 15")] == [
        "E = 15 splits evenly into nhead ∈ {1, 3, 5, 15}; d_k = 5. " + note]
    at.sidebar.select_slider(key="w_E").set_value(16).run()
    assert running(at).nhead == 2
    assert not any("as set before" in c.value for c in at.sidebar.caption)
    at.sidebar.select_slider(key="w_E").set_value(15).run()
    at.sidebar.select_slider(key="w_nhead").set_value(5).run()  # chosen now: nothing to say
    assert running(at).nhead == 5 and not any("as set before" in c.value for c in at.sidebar.caption)
    assert not at.exception
    # Heads that divide E but lie past the slider's end are not said not to divide it (the link's warning and
    # "the slider stops at 128" say what happened).
    at = make_app({"E": "256", "nhead": "256"}).run()
    assert running(at).nhead == 128 and not any("as set before" in c.value for c in at.sidebar.caption)


def test_target_length_and_d_ff_follow_M_and_E_until_set_apart():
    """A teacher who sets M = 32 and E = 512 gets M_target = 32 and d_ff = 2048 with them, as the paper
    ties them; once set apart by hand, they stay where they were put."""
    at = make_app().run()
    at.sidebar.select_slider(key="w_M").set_value(32).run()
    at.sidebar.select_slider(key="w_E").set_value(512).run()
    cfg = running(at)
    assert (cfg.M, cfg.M_target, cfg.E, cfg.d_ff) == (32, 32, 512, 2048)
    assert at.dataframe[0].value["live shape"][12] == "(2, 32, 512)"  # row 13, the decoder output
    assert at.query_params["d_ff"] == "2048" and at.query_params["M_target"] == "32"
    at.sidebar.select_slider(key="w_M_target").set_value(5).run()
    at.sidebar.select_slider(key="w_d_ff").set_value(100).run()
    at.sidebar.select_slider(key="w_M").set_value(12).run()
    at.sidebar.select_slider(key="w_E").set_value(64).run()
    cfg = running(at)
    assert (cfg.M, cfg.M_target, cfg.E, cfg.d_ff) == (12, 5, 64, 100)
    assert at.sidebar.selectbox(key="w_preset").value == "(custom)"
    assert not at.exception
    # d_ff set by hand and E moved before the run for the first is over (both in one run here): the
    # hand-set value stays, though the last finished run still had d_ff = 4E.
    at = make_app().run()
    at.sidebar.select_slider(key="w_d_ff").set_value(100)
    at.sidebar.select_slider(key="w_E").set_value(64).run()
    assert (running(at).E, running(at).d_ff) == (64, 100)


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset(name):
    at = make_app().run()
    at.sidebar.selectbox(key="w_preset").set_value(name).run()
    assert not at.exception, at.exception
    preset = PRESETS[name]
    cfg = running(at)
    for field in ("N", "M", "M_target", "E", "nhead", "vocab_size", "layers", "d_ff", "positional", "tie_embeddings"):
        assert getattr(cfg, field) == getattr(preset, field), field
    assert_table_matches_trace(at)
    t = trace(cfg)
    banners = [w.value for w in at.warning if "Shape-only pass" in w.value]
    assert bool(banners) == t.shape_only, (name, banners)
    # Of the presets over the budget, only the paper's big model and T5-small fit a slim pass, and the banner says so.
    slim = "The Attention page still draws its heatmaps, from a slim pass" in "".join(banners)
    assert slim == (name.startswith("Paper big") or name == "T5-small"), (name, banners)


def test_moving_a_slider_after_a_preset_marks_the_config_custom():
    at = make_app().run()
    at.sidebar.selectbox(key="w_preset").set_value(next(iter(PRESETS))).run()
    at.sidebar.slider(key="w_N").set_value(4).run()
    assert at.sidebar.selectbox(key="w_preset").value == "(custom)"
    assert running(at).N == 4


def test_stacked_toggle_shows_pytorch_layout_beside_the_per_head_view():
    at = make_app().run()
    assert STACKED_COLUMN not in at.dataframe[0].value.columns
    at.toggle(key="x_stacked").set_value(True).run()
    frame = at.dataframe[0].value
    rows = dict(zip(frame["#"], zip(frame["live shape"], frame[STACKED_COLUMN])))
    assert rows[5] == ("(2, 8, 8)", "(2, 2, 8, 8)")  # note: (N, M, d_k); PyTorch: (N, nhead, M, d_k)
    assert rows[7] == ("(2, 8, 8)", "(2, 2, 8, 8)")
    assert rows[1][1] == "same"


def test_the_page_names_no_note_a_first_time_learner_has_not_read():
    """The 14 rows come from a learner's note that the app does not show; 'the note's per-head view'
    and 'The note calls this row...' sent a newcomer looking for a note that is nowhere on screen."""
    at = make_app().run()
    toggle = at.toggle(key="x_stacked")
    assert toggle.label == "Show the heads stacked as PyTorch's scaled_dot_product_attention takes them, beside the one-head view"
    assert "note" not in toggle.label + toggle.help
    at.selectbox(key="x_code_row").set_value("6. attention weights").run()
    assert not any("The note" in m.value for m in at.markdown)
    assert any("Some notes call this row the attention scores" in m.value for m in at.markdown)


def test_an_extras_description_cut_off_in_its_table_can_be_read_whole():
    """The extras' table cut their descriptions at the column's edge too, with no row to pick."""
    at = explorer_opened(make_app(), code=True)
    t = trace(running(at))
    at.selectbox(key="x_code_row").set_value("extra 1. Q, all heads stacked (SDPA layout)").run()
    assert any(t.extras[0].description in m.value for m in at.markdown)
    assert t.extras[0].code and row_code(at) == t.extras[0].code  # the model's own lines that compute Q
    at.selectbox(key="x_code_row").set_value("extra 5. W^Q of one head").run()
    assert row_code(at) == "# (a weight or a mask: no line of the forward pass computes it)"


def test_the_memory_chart_says_its_lesson_before_its_crossing_points():
    at = explorer_opened(make_app())
    [lesson] = [c.value for c in at.caption if "quadruples the attention term" in c.value]
    assert lesson.startswith("Doubling M doubles the linear terms and quadruples the attention term, so from some M")
    assert "from M = 55" in lesson  # the whole model's crossing, at the default config


def test_presets_are_named_for_what_they_are():
    """'Seed note' and 'Seed notebook' named notes a first-time learner has never seen."""
    at = make_app().run()
    options = at.sidebar.selectbox(key="w_preset").options
    assert not any("seed" in o.lower() for o in options), options
    at.sidebar.selectbox(key="w_preset").set_value("Worked example (M=3, E=4)").run()
    cfg = running(at)
    assert (cfg.M, cfg.E, cfg.nhead, cfg.d_k) == (3, 4, 2, 2)


def test_the_page_says_what_a_row_of_its_table_is_before_the_table():
    at = make_app().run()
    assert "Each row of the table is one tensor of that pass, in the pass's order" in at.caption[0].value
    assert "through the first encoder layer (rows 5 to 10)" in at.caption[0].value


def test_show_code_for_a_row():
    at = explorer_opened(make_app(), code=True)
    at.selectbox(key="x_code_row").set_value("6. attention weights").run()
    code = row_code(at)
    assert "core/model.py" in code
    assert 'record(rec, prefix + "weights"' in code
    assert "softmax" in code
    # The row's description, which the table's cell cuts off at its edge, in full beside its code.
    from core import DEFAULT, trace
    row = trace(DEFAULT).row("attention_scores")
    assert f"**attention weights**, (N, nhead, M, M): {row.description}" in [m.value for m in at.markdown]


def test_extras_and_downloads_render():
    at = explorer_opened(make_app(), more=True)
    extras = at.dataframe[1].value
    assert "causal mask" in list(extras["tensor"])
    assert extras.set_index("tensor").loc["causal mask", "live shape"] == "(8, 8)"
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Download CSV", "Download JSON"]


def test_the_figure_in_words_follows_the_sliders():
    at = make_app().run()
    at.sidebar.slider(key="w_N").set_value(5).run()
    text = figure_in_words(at).markdown[0].value
    assert text.count("\n1. From ") == 24 and text.startswith("1. From inputs (source token ids)")
    assert "to input embedding × √E: (5, 8)" in text  # N=5, M=8
    assert text.endswith("From softmax to output probabilities: (5, 8, 100)")


def test_csv_download_has_the_live_shapes():
    t = trace(TransformerConfig(N=3, M=5, E=12, nhead=3, vocab_size=20))
    frame = pd.read_csv(io.StringIO(table_csv(t)))
    assert list(frame["live shape"]) == [shape_text(r.shape) for r in t.rows]
    assert list(frame["bytes"]) == [r.bytes for r in t.rows]


def test_the_table_copies_as_markdown_under_its_sizes_and_downloads_under_a_name_with_them():
    """For a handout: the Markdown under the table names the sizes on its first line and has the live
    shapes of the sliders' config; the files are named for the sizes, not all transformer_shapes.csv."""
    at = explorer_opened(make_app({"N": "4", "M": "16", "E": "64", "nhead": "4"}), copy=True)
    [block] = [c for c in at.code if c.language == "markdown"]
    lines = block.value.splitlines()
    assert lines[0] == ("Shapes of one forward pass at N=4, M=16, M_target=16, E=64, nhead=4 (d_k=16), d_ff=256, "
                        "vocab_size=100, layers=2, sinusoidal positions.")
    assert lines[2] == "| # | tensor | live shape | formula | elements | memory |"
    assert lines[4] == "| 1 | input tokens | (4, 16) | (N, M) | 64 | 512 B |"
    assert lines[-1] == "| 14 | output probabilities | (4, 16, 100) | (N, M_target, vocab_size) | 6,400 | 25.0 KiB |"
    at.sidebar.slider(key="w_N").set_value(7).run()
    [block] = [c for c in at.code if c.language == "markdown"]
    assert "| 1 | input tokens | (7, 16) | (N, M) | 112 | 896 B |" in block.value.splitlines()
    cfg = TransformerConfig(N=4, M=16, E=64, nhead=4, tie_embeddings=True)
    assert table_file_name(cfg, "csv") == \
        "transformer_shapes_N4_M16_Mtarget16_E64_nhead4_vocab100_layers2_dff256_sinusoidal_tied.csv"


def test_config_is_per_session():
    first, second = make_app().run(), make_app().run()
    first.sidebar.slider(key="w_N").set_value(7).run()
    second.run()
    assert running(first).N == 7
    assert running(second).N == 2


def test_large_counts_fit_their_boxes_and_a_real_model_counts_as_itself():
    """A metric box cuts long numbers off ("406,529,766,…"): large counts are shortened, exact in the
    help. A real model's preset is that model (no borrowed widths in another arch): its published count."""
    at = make_app().run()
    assert [m.value for m in at.metric][1] == "20,260"  # small counts stay exact
    assert [m.label for m in at.metric][2] == "this pass holds"
    name = next(n for n in PRESETS if n.startswith("GPT-3"))
    at.sidebar.selectbox(key="w_preset").set_value(name).run()
    assert not at.exception, at.exception
    values = {m.label: m for m in at.metric}
    total = trace(PRESETS[name]).params["total"]
    assert total == 174_604_259_328  # GPT-3 175B itself, decoder-only
    assert values["parameters"].value == f"{total / 1e9:.1f} billion"
    assert values["parameters"].proto.help == f"Exactly {total:,}."
    assert values["attention weights per layer"].value == "402.7 million"  # 1 * 96 * 2048 * 2048
    assert values["attention weights per layer"].proto.help.startswith("Exactly 402,653,184. ")
    # In the page's word, "pass" (the caption's "forward pass"), not "trace", which nothing explains.
    assert "a real pass would hold" in values and "trace" not in values["a real pass would hold"].proto.help


# The tables' widths at 1280 x 800 with the sidebar open, as measured in Chromium (docs/layout.md).
LAPTOP_TABLE_PX = 784
NUMBER_COLUMNS_PX = 71 + 66


@pytest.mark.parametrize("which", [0, 1])  # the 14 rows, the extras
def test_a_tables_text_wraps_and_its_description_is_on_a_laptop_screen(which):
    """On a 1280 x 800 laptop with the sidebar open a description showed its first 25 or so characters: one
    line of a 400 px column, half of it past the table's edge. Rows over 64 px high wrap (the only way
    Streamlit 1.67 wraps a cell), and the other columns leave the description 275 px on screen."""
    at = explorer_opened(make_app(), more=True)
    table = at.dataframe[which]
    assert table.proto.row_height > 64
    columns = json.loads(table.proto.columns)
    widths = {name: columns.get(name, {}).get("width") for name in table.value.columns}
    assert widths["elements"] is None and widths["memory"] is None, widths  # sized to their numbers
    assert widths["description"] >= 275, widths
    assert sum(w for w in widths.values() if w) + NUMBER_COLUMNS_PX <= LAPTOP_TABLE_PX, widths


def test_a_description_too_long_for_its_cell_says_where_to_read_it_whole():
    """Three lines hold about 125 characters; glide cut a longer one at the row's top and foot, mid-line.
    The cell keeps the first sentence and points to 'Read a row whole'; the downloads keep it whole."""
    at = explorer_opened(make_app(), more=True)
    t = trace(running(at))
    for frame, rows in ((at.dataframe[0].value, t.rows), (at.dataframe[1].value, t.extras)):
        for cell, row in zip(frame["description"], rows):
            assert len(cell) <= DESCRIPTION_CELL_CHARS, cell
            assert cell == row.description or cell.endswith(READ_ON), cell
    row6 = at.dataframe[0].value["description"][5]
    assert row6 == ("softmax(QK^T / sqrt(d_k)) for every head: row i says how much query i takes from each key."
                    + READ_ON)
    extra1 = at.dataframe[1].value["description"][0]
    assert len(t.extras[0].description) > DESCRIPTION_CELL_CHARS  # too long: cut, and pointed to the box
    assert extra1.endswith(READ_ON)
    assert t.extras[0].description.startswith(extra1.removesuffix(READ_ON).rstrip("…."))
    assert "Some notes call this row" in pd.read_csv(io.StringIO(table_csv(t)))["description"][5]
    assert READ_ON.strip(" ()").startswith("more in “" + at.selectbox(key="x_code_row").label.split(",")[0])
    assert cell_text("Short.") == "Short."
    # An abbreviation's full stop does not end the first sentence.
    long = "Keys and values, e.g. the encoder's memory, enter here. " + "More words follow here. " * 8
    assert cell_text(long) == "Keys and values, e.g. the encoder's memory, enter here." + READ_ON
    capital = "Keys and values, E.g. the encoder's memory, enter here."
    assert cell_text(long.replace("e.g.", "E.g.")) == capital + READ_ON
    assert cell_text("Q, K, V, etc. " + long) == "Q, K, V, etc." + READ_ON  # "etc." most often ends a sentence


def test_the_row_number_column_leaves_a_phone_room_for_the_live_shape():
    """A 390 px phone shows 358 px of the table: "#" at Streamlit's "small" (75 px) and the tensor's name
    (200 px) left the live shape 83 px, and cut "(64, 4096, 12288)" to "(64, 409". "#" needs two digits."""
    at = make_app().run()
    width = json.loads(at.dataframe[0].proto.columns)["#"]["width"]
    assert isinstance(width, int) and width <= 40, width



def test_a_browser_behind_the_server_does_not_undo_what_code_set():
    """Pressing a slider's arrow key fast sends each press before the run of the last one has reached
    the browser, with the values the browser still shows: d_ff and the preset's name from before code
    followed E or marked the config custom. Taken for the learner's moves, they put the config back to
    the preset (the slider then showed N = 2 while the page ran at N = 6) and stopped d_ff following E.
    Here one message carries such stale values beside the real press; a lone change is the learner's."""
    default = next(name for name, cfg in PRESETS.items() if cfg == TransformerConfig())
    at = make_app().run()
    at.sidebar.select_slider(key="w_E").set_value(17).run()
    cfg = running(at)
    assert (cfg.nhead, cfg.d_ff) == (1, 68) and at.sidebar.selectbox(key="w_preset").value == "(custom)"
    at.sidebar.select_slider(key="w_d_ff").set_value(64)  # as the browser still shows them
    at.sidebar.selectbox(key="w_preset").set_value(default)
    at.sidebar.select_slider(key="w_E").set_value(18).run()  # the next press
    cfg = running(at)
    assert (cfg.N, cfg.E, cfg.nhead, cfg.d_ff) == (2, 18, 2, 72) and at.query_params["d_ff"] == "72"
    assert at.sidebar.select_slider(key="w_d_ff").value == 72
    assert at.sidebar.selectbox(key="w_preset").value == "(custom)"

    at.sidebar.select_slider(key="w_d_ff").set_value(68).run()  # alone: the learner's, though code had it
    assert running(at).d_ff == 68

    at = make_app().run()  # the preset's name, shown since the page opened
    at.sidebar.slider(key="w_N").set_value(3).run()
    at.sidebar.selectbox(key="w_preset").set_value(default)  # still shown, beside the next press of N
    at.sidebar.slider(key="w_N").set_value(4).run()
    assert running(at).N == 4 and at.sidebar.slider(key="w_N").value == 4
    assert at.sidebar.selectbox(key="w_preset").value == "(custom)"
    at.sidebar.selectbox(key="w_preset").set_value(default).run()  # alone: the learner chose it again
    assert running(at) == TransformerConfig() and not at.exception


def test_a_preset_sets_what_the_followers_follow_before_its_run_ends(monkeypatch):
    """M_target and d_ff follow from a preset's M and E even when the learner's next move comes before
    the run that would have recorded them (Streamlit cuts that run short): the preset's callback
    records them itself. Without it, Paper base then E = 256 left d_ff at 2048."""
    import ui.sidebar.config as sidebar

    state: dict = {"w_preset": next(n for n in PRESETS if n.startswith("Paper base"))}
    monkeypatch.setattr(sidebar.st, "session_state", state)
    sidebar._apply_preset()  # the preset's callback, and no run after it
    assert (state["w_M"], state["w_M_target"], state["w_E"], state["w_d_ff"]) == (16, 16, 512, 2048)
    state["w_E"], state["w_M"] = 256, 64  # two moves, each with its callback
    sidebar._follow("E", "d_ff", lambda e: 4 * e)
    sidebar._follow("M", "M_target", lambda m: m)
    assert (state["w_M"], state["w_M_target"], state["w_E"], state["w_d_ff"]) == (64, 64, 256, 1024)


@pytest.mark.parametrize("query, grows", [
    ({"positional": "learned"}, True),  # max_len = 8, far inside the chart
    ({"positional": "learned", "M": "8", "M_target": "4096", "E": "64", "nhead": "4", "N": "2"}, False),
    ({"positional": "sinusoidal", "M": "8", "M_target": "4096", "E": "64", "nhead": "4", "N": "2"}, False),
])
def test_the_memory_chart_says_the_parameters_grow_only_where_its_line_does(query, grows):
    """With learned positions and M_target = 4096, max_len = 4096 is the chart's last point, so the
    parameter line is flat; the legend and a caption said it rises past max_len all the same."""
    from render.tables import LEARNED_PARAMS, MEMORY_PARTS

    at = explorer_opened(make_app(query))
    assert not at.exception
    drawn = " ".join(c.proto.spec for c in at.get("vega_lite_chart"))
    captions = " ".join(c.value for c in at.caption)
    assert (LEARNED_PARAMS in drawn) is grows and (MEMORY_PARTS["params"] in drawn) is not grows
    assert ("the parameter line rises past M = max_len" in captions) is grows


def test_a_per_head_row_says_which_head_of_which_recorded_tensor_it_shows():
    """'Recorded as enc.0.self_attn.q, shape (2, 8, 8)' gave the row's shape to a tensor recorded with
    every head stacked, (2, 2, 8, 8)."""
    at = make_app().run()
    t = trace(running(at))
    at.selectbox(key="x_code_row").set_value("5. Q, K, V of one head").run()
    assert ("Head 0 of `enc.0.self_attn.q`, which is recorded with every head stacked, shape (2, 2, 8, 8); this "
            "row's shape is (2, 8, 8).") in [c.value for c in at.caption]
    at.selectbox(key="x_code_row").set_value("extra 5. W^Q of one head").run()
    assert ("Head 0 of `enc.0.self_attn.W_Q`, which is recorded with every head stacked, shape (2, 16, 8); this "
            "row's shape is (16, 8).") in [c.value for c in at.caption]
    at.selectbox(key="x_code_row").set_value("6. attention weights").run()
    assert f"Recorded as `enc.0.self_attn.weights`, shape {t.row('attention_scores').shape}." in [
        c.value for c in at.caption]


@pytest.mark.parametrize("tie", ["true", "false"])
def test_the_parameter_caption_says_where_the_vocabulary_weights_live(tie):
    """Tied, 'the embeddings and output layer grow with vocab_size × E' was false: the output layer's
    own parameters are its vocab_size biases (python -m core --tie-embeddings: output layer 100)."""
    at = explorer_opened(make_app({"tie_embeddings": tie}), tab="Parameters")
    t = trace(running(at))
    captions = " ".join(c.value for c in at.caption)
    if tie == "true":
        assert t.params["output layer"] == t.config.vocab_size
        assert "the one embedding matrix, shared with the output layer, grows with vocab_size × E" in captions
    else:
        assert t.params["output layer"] == t.config.vocab_size * (t.config.E + 1)
        assert "the embeddings and output layer grow with vocab_size × E." in captions


def test_the_memory_crossing_caption_says_it_reads_the_chart_where_M_target_is_M():
    """The crossing point counts M_target = M, as the chart draws it; with the sidebar's M_target at 1
    the caption gave it as this model's own without a word."""
    at = explorer_opened(make_app({"M_target": "1"}))
    captions = " ".join(c.value for c in at.caption)
    assert "Along the chart, where M_target = M (yours is 1, not 8): over an encoder layer" in captions
    at = explorer_opened(make_app())
    assert "Along the chart, where M_target = M: over an encoder layer" in " ".join(c.value for c in at.caption)
