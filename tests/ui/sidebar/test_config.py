"""The shared sidebar (ui/sidebar/config.py): one config a run, shown as it runs; the learner's own slider values kept
while a text or the trained model sets a field; K/V heads kept through a step of E; presets in a link."""

from __future__ import annotations

import pytest

from core import PRESETS
from core.config import LLAMA2_70B, TINY_GPT
from tests.support.apptest import architecture_opened, make_app, open_page, running, sliders

THE_CAT = "the cat sat on the mat"


def sidebar_widgets(at) -> dict[str, tuple]:
    """Every sidebar slider's key -> (value, disabled)."""
    return {w.key: (w.value, w.disabled) for w in (*at.sidebar.slider, *at.sidebar.select_slider)}


def test_a_text_shows_its_sizes_in_the_disabled_sidebar_and_the_button_gives_the_learners_sliders_back():
    at = make_app().run()
    at.sidebar.slider(key="w_N").set_value(3).run()
    at.sidebar.select_slider(key="w_vocab_size").set_value(64).run()
    at.text_area(key="yt_text").input(THE_CAT).run()
    assert not at.exception
    shown = sidebar_widgets(at)
    assert (shown["shown_N"], shown["shown_M"], shown["shown_vocab_size"]) == ((1, True), (11, True), (7, True))
    assert "w_N" not in shown and shown["w_E"] == (16, False)  # the fields the text leaves alone stay the learner's
    assert (running(at).N, running(at).M, running(at).vocab_size) == (1, 11, 7)
    assert (sliders(at).N, sliders(at).vocab_size) == (3, 64)
    assert at.sidebar.info[0].value == "Your text on this page sets N, M, M_target and vocab_size."
    at.sidebar.select_slider(key="w_E").set_value(32).run()  # another slider still works meanwhile
    assert running(at).E == 32 and running(at).N == 1
    at.sidebar.button(key="sidebar_clear_text").click().run()
    assert not at.exception
    shown = sidebar_widgets(at)
    assert (shown["w_N"], shown["w_M"], shown["w_vocab_size"]) == ((3, False), (8, False), (64, False))
    assert (running(at).N, running(at).vocab_size, running(at).E) == (3, 64, 32)
    assert at.text_area(key="yt_text").value == "" and not at.sidebar.info
    assert (at.query_params["N"], at.query_params["vocab_size"]) == ("3", "64")


def test_every_page_runs_the_text_sized_config_the_sidebar_shows():
    """The text set on the Explorer sizes every page's model (the sidebar says so on each), not only its own."""
    at = make_app().run()
    at.text_area(key="yt_text").input(THE_CAT).run()
    for page in ("positional", "quiz"):
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception
        assert (running(at).N, running(at).M, running(at).vocab_size) == (1, 11, 7), page
        assert sidebar_widgets(at)["shown_M"] == (11, True), page
        # The page's link cannot carry the text (the Cost page's tokens= is its own), and the sidebar says so.
        assert at.sidebar.info[0].value == ("Your text on the Explorer sets N, M, M_target and vocab_size (this "
                                            "page's link leaves it out)."), page


def test_the_trained_model_shows_in_the_sidebar_and_the_button_leaves_it():
    from core.train import ReversalSettings, train_reversal

    res = train_reversal(ReversalSettings(steps=5, N=8), keep_model=True)
    at = architecture_opened(make_app()).run()
    preset_before = at.sidebar.selectbox(key="w_preset").value
    at.session_state["lab_trained"] = res.trained
    at.run()
    at.radio(key="yt_model").set_value("trained in the Training lab").run()
    assert not at.exception
    trained = res.trained.config
    assert running(at) == trained and sliders(at).arch == "encoder-decoder"
    shown = sidebar_widgets(at)
    assert shown["shown_E"] == (trained.E, True) and shown["shown_layers"] == (trained.layers, True)
    assert at.sidebar.radio(key="shown_arch").value == "decoder-only" and at.sidebar.radio(key="shown_arch").disabled
    preset = at.sidebar.selectbox(key="shown_preset")  # no preset made it: the greyed box says whose it is
    assert preset.disabled and preset.value == "(the Training lab's model)"
    assert at.sidebar.info[0].value.startswith("The Training lab's trained model is running")
    at.sidebar.button(key="sidebar_leave_trained").click().run()
    assert not at.exception
    assert running(at) == sliders(at) and sliders(at).E == 16 and sidebar_widgets(at)["w_E"] == (16, False)
    assert at.sidebar.radio(key="w_arch").value == "encoder-decoder" and not at.sidebar.info
    preset = at.sidebar.selectbox(key="w_preset")
    assert preset.value == preset_before and not preset.disabled


def test_the_pages_choices_fit_the_model_that_runs_not_the_sliders():
    """A text's N = 1 has one batch item; the trained model's E its own curve dimensions and learned table."""
    from core.train import ReversalSettings, train_reversal
    from ui.link.choices import default_dims

    at = open_page("attention", {"N": "3"})
    at.selectbox(key="a_item").set_value(2).run()
    at.switch_page("pages/explorer.py").run()
    at.text_area(key="yt_text").input(THE_CAT).run()
    at.switch_page("pages/attention.py").run()
    assert not at.exception and running(at).N == 1
    assert at.selectbox(key="a_item").value == 0 and at.query_params["item"] == "0"

    res = train_reversal(ReversalSettings(steps=5, N=8), keep_model=True)
    at = make_app().run()
    at.session_state["lab_trained"] = res.trained
    at.run()
    at.radio(key="yt_model").set_value("trained in the Training lab").run()
    at.switch_page("pages/positional.py").run()
    assert not at.exception
    E = res.trained.config.E
    assert at.multiselect(key=f"p_dims_{E}").value == default_dims(E)
    words = " ".join(c.value for c in at.caption)
    assert "the model's own table, trained: the reversal task" in words and "untrained" not in words


def test_stepping_E_keeps_the_learners_kv_heads_and_says_when_they_must_change():
    at = make_app({"arch": "decoder-only", "nhead": "4", "nhead_kv": "2"}).run()
    said = {}
    for E in range(17, 33):  # one key press at a time: 17, a prime, forces one head
        at.sidebar.select_slider(key="w_E").set_value(E).run()
        assert not at.exception
        said[E] = " ".join(c.value for c in at.sidebar.caption if c.value.startswith("nhead_kv"))
    assert (running(at).E, running(at).nhead, running(at).nhead_kv) == (32, 4, 2)
    assert "nhead_kv = 2, as set before, does not divide nhead = 1, so nhead_kv is 1 for now" in said[17]
    assert "as set before" not in said[32]


def test_mha_stays_mha_when_nhead_moves():
    at = make_app({"arch": "decoder-only", "E": "32", "nhead": "4"}).run()
    at.sidebar.select_slider(key="w_nhead").set_value(8).run()
    assert (running(at).nhead, running(at).nhead_kv) == (8, 8)


@pytest.mark.parametrize("written", ["llama-2-70b", "Llama-2-70B", "LLAMA 2 70B", "llama_2_70b"])
def test_a_links_preset_applies_that_preset_by_name_in_any_case(written):
    at = make_app({"preset": written}).run()
    assert not at.exception
    assert running(at) == LLAMA2_70B and at.sidebar.selectbox(key="w_preset").value == "Llama-2-70B"
    assert not [w for w in at.warning if "link" in w.value]


def test_a_links_own_settings_are_laid_over_its_preset_and_an_unknown_preset_is_named():
    at = make_app({"preset": "tiny-gpt", "M": "12"}).run()
    assert running(at) == TINY_GPT.replace(M=12)
    at = make_app({"preset": "gpt-4"}).run()
    warning = next(w.value for w in at.warning if "link" in w.value)
    assert "preset\\=\\'gpt\\-4\\' is no preset" in warning and "llama\\-2\\-70b" in warning


def test_every_name_a_link_gives_that_the_app_does_not_know_is_named_in_the_warning():
    """A platform's utm_source used to pass in silence; a teacher's typo is named the same way."""
    at = make_app({"utm_source": "lms", "N": "4", "layer": "1"}).run()
    warning = next(w.value for w in at.warning if "link" in w.value)
    assert "utm\\_source\\=\\'lms\\' names no setting" in warning
    assert "layer\\=\\'1\\' names no setting\\, so it was left out\\; did you mean layers" in warning
    assert running(at).N == 4


def test_the_presets_are_one_entry_per_real_model():
    assert not any("sizes" in name for name in PRESETS)
    for name in ("GPT-2 small", "GPT-3", "Llama-2-7B", "Llama-2-70B"):
        assert PRESETS[name].arch == "decoder-only", name


def test_a_text_over_200_characters_stays_out_of_the_url_and_the_page_says_so():
    at = make_app().run()
    at.text_area(key="yt_text").input("word " * 60).run()
    assert "text" not in at.query_params
    assert any("cannot be shared by link" in c.value for c in at.caption)


def test_a_link_with_a_text_over_200_characters_fills_the_box_but_the_url_keeps_it_no_longer():
    long = "word " * 60
    at = make_app({"text": long, "N": "3"}).run()
    assert at.text_area(key="yt_text").value == long and running(at).M == 120
    assert "text" not in at.query_params and at.query_params["N"] == "3"
    assert any("cannot be shared by link" in c.value for c in at.caption)


def test_one_distinct_token_is_one_token():
    at = make_app().run()
    at.text_area(key="yt_text").input("cat").run()
    said = next(c.value for c in at.caption if "distinct" in c.value)
    assert "1 sequence of up to M = 1 word token;" in said and "(1 distinct token and" in said


def test_a_number_box_says_its_range():
    at = open_page("positional", {"positional": "rope"})
    boxes = {box.key: box.label for box in at.number_input}
    assert boxes["p_rope_s"] == "s — shift (0 to 100,000)"
