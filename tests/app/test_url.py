"""The URL carries the config: a link reproduces the view, and garbage falls back with a warning."""

from __future__ import annotations

import re

import pytest

from core import DEFAULT, PRESETS
from pages.common import CONFIG_FIELDS, link_params, snap_config
from pages.page_links import PAGE_CHOICES, in_any_case, read_choice, read_choices
from tests.app.conftest import make_app

GARBAGE = [  # query, what the config must become, a word the warning must contain
    ({"E": "abc"}, {"E": DEFAULT.E}, "E='abc'"),
    ({"nhead": "0"}, {"nhead": 1}, "nhead=0"),
    ({"M": "999999999"}, {"M": 4096}, "M=999999999"),
    ({"N": "-3"}, {"N": 1}, "N=-3"),
    ({"E": "10", "nhead": "4"}, {"E": 10, "nhead": 5}, "nhead=4"),
    ({"positional": "<script>"}, {"positional": "sinusoidal"}, "positional="),
    ({"tie_embeddings": "maybe"}, {"tie_embeddings": False}, "tie_embeddings="),
    ({"vocab_size": "1e9"}, {"vocab_size": DEFAULT.vocab_size}, "vocab_size="),
    # Each warning says what is wrong with the value: a divisor above the slider's last step is no
    # "does not divide", and a value between two steps is not "outside" the range.
    ({"nhead": "-2"}, {"nhead": 1}, "nhead=-2 is not a number of heads (at least 1)"),
    ({"E": "12288", "nhead": "256"}, {"nhead": 128}, "nhead=256 divides E=12288, but the slider stops at 128"),
    ({"E": "100"}, {"E": 96}, "E=100 is not one of the slider's steps; using the nearest, 96."),
    ({"M": "999999999"}, {"M": 4096}, "outside the slider's range, 1 to 4096"),
    # A near miss of a setting's name, typed off a slide, is said, not dropped in silence.
    ({"E": "64", "nheads": "8"}, {"E": 64, "nhead": 2}, "nheads='8' names no setting, so it was left out; did "
                                                        "you mean nhead?"),
]
PAPER_BASE_NAME = next(name for name in PRESETS if name.startswith("Paper base"))


@pytest.mark.parametrize("query, expected, word", GARBAGE, ids=[str(q) for q, _, _ in GARBAGE])
def test_url_garbage_warns_and_falls_back(query, expected, word):
    at = make_app(query).run()
    assert not at.exception, at.exception
    cfg = at.session_state["cfg"]
    for field, value in expected.items():
        assert getattr(cfg, field) == value, field
    # At the top of the page, not in the sidebar, which a phone collapses (see link_warning); read
    # here without the backslashes that keep the link's text from being Markdown.
    warnings = [re.sub(r"\\(.)", r"\1", w.value) for w in at.main.warning]
    assert any(word in w for w in warnings), warnings
    assert not at.sidebar.warning
    # The page still shows the table for the fallback config, and the URL now names it.
    assert len(at.dataframe[0].value) == 14
    assert at.query_params["E"] == str(cfg.E)
    assert at.query_params["nhead"] == str(cfg.nhead)
    # Once the learner moves a slider, the warnings about the old URL go away.
    at.sidebar.slider(key="w_layers").set_value(3).run()
    assert not [w for w in at.main.warning if "Part of this link could not be used" in w.value]


def test_a_links_text_is_shown_as_it_is_never_as_markdown():
    """A value from a link is quoted in the warning: a Markdown link or a formula in it must show as
    typed, not become a link to another site or a rendered formula."""
    at = make_app({"E": "[x](http://example.com)", "positional": "$x^2$ **b**"}).run()
    assert not at.exception
    [warning] = [w.value for w in at.main.warning]
    assert "E\\=\\'\\[x\\]\\(http\\:\\/\\/example\\.com\\)\\'" in warning
    assert "\\$x^2\\$ \\*\\*b\\*\\*" in warning.replace("\\^", "^")


def test_a_link_typed_by_hand_is_read_in_any_case_and_with_the_papers_names():
    """?n=4&m=16 off a slide gave the default sizes without a word; so did d_model, the name the E slider
    shows. A name like no setting at all, as a platform adds to a shared link, is passed over quietly."""
    at = make_app({"n": "4", "m": "16", "d_model": "64", "Nhead": "8", "utm_source": "lms"}).run()
    assert not at.exception and not at.warning
    cfg = at.session_state["cfg"]
    assert (cfg.N, cfg.M, cfg.E, cfg.nhead) == (4, 16, 64, 8)
    assert at.query_params["N"] == "4" and "n" not in at.query_params and "utm_source" not in at.query_params
    values, warnings = link_params({"E": "32", "e": "64", "dim_feedforward": "100", "layer": "3"})
    assert values == {"E": "32", "d_ff": "100"}  # the exact name wins over another case
    assert warnings == ["layer='3' names no setting, so it was left out; did you mean layers?"]


def test_a_link_reproduces_the_config():
    query = {"N": "3", "M": "12", "M_target": "5", "E": "24", "nhead": "6", "vocab_size": "50", "layers": "3",
             "d_ff": "48", "positional": "learned", "tie_embeddings": "True"}
    at = make_app(query).run()
    assert not at.exception
    assert not at.warning
    cfg = at.session_state["cfg"]
    assert (cfg.N, cfg.M, cfg.M_target, cfg.E, cfg.nhead, cfg.vocab_size, cfg.layers, cfg.d_ff) == \
        (3, 12, 5, 24, 6, 50, 3, 48)
    assert cfg.positional == "learned" and cfg.tie_embeddings is True
    assert at.dataframe[0].value["live shape"][13] == "(3, 5, 50)"


def test_sliders_write_the_config_into_the_url():
    at = make_app().run()
    at.sidebar.slider(key="w_N").set_value(6).run()
    assert at.query_params["N"] == "6"


def test_snap_config_never_raises_on_odd_values():
    odd = ["", " ", "nan", "inf", "-0", "1.5", "0x10", "9" * 40, "Ｅ", None]
    for value in odd:
        values = {name: value for name in ("N", "M", "M_target", "E", "nhead", "vocab_size", "layers", "d_ff")}
        cfg, warnings = snap_config(values)
        assert cfg.E % cfg.nhead == 0
        if value is not None:
            assert warnings, value


def test_a_link_names_the_preset_it_matches():
    """A link whose sliders all equal a preset's shows that preset's name; any other shows custom."""
    base = PRESETS[PAPER_BASE_NAME]
    at = make_app({f: str(getattr(base, f)) for f in CONFIG_FIELDS}).run()
    assert not at.exception
    assert at.sidebar.selectbox(key="w_preset").value == PAPER_BASE_NAME
    assert make_app().run().sidebar.selectbox(key="w_preset").value == next(iter(PRESETS))  # the default
    at = make_app({"N": "3"}).run()
    assert at.sidebar.selectbox(key="w_preset").value == "(custom)"


def test_the_positional_kind_in_a_link_is_read_whatever_its_case():
    cfg, warnings = snap_config({"positional": " Learned "})
    assert cfg.positional == "learned" and not warnings


def link_warnings(at) -> list[str]:
    """The items of the link's warning, as the page shows them (without the escaping backslashes)."""
    [warning] = [w.value for w in at.main.warning]
    heading, items = warning.split("\n\n", 1)
    assert heading == "**Part of this link could not be used as written:**"
    return [re.sub(r"\\(.)", r"\1", item.removeprefix("- ")) for item in items.split("\n")]


def test_the_links_warning_heading_is_true_of_a_name_left_out():
    """It said the link asked for sizes the sliders cannot show, above an item about a misspelt name."""
    at = make_app({"E": "64", "nheads": "8"}).run()
    assert link_warnings(at) == ["nheads='8' names no setting, so it was left out; did you mean nhead?"]


SMALL = {"N": "4", "E": "16", "nhead": "4", "layers": "3", "M": "8", "M_target": "4"}


def open_attention(query: dict[str, str]):
    """The app opened on a link to the attention page, as a browser opens /attention?...."""
    at = make_app(query)
    at.switch_page("pages/attention.py")
    return at.run()


def view(at) -> tuple:
    return (at.radio(key="a_kind").value, at.selectbox(key="a_layer").value, at.selectbox(key="a_head").value,
            at.selectbox(key="a_item").value)


def test_a_link_opens_the_attention_page_on_its_kind_layer_head_and_item():
    """A lesson on masking sends a link that opens on the decoder's masked self-attention."""
    at = open_attention(SMALL | {"kind": "decoder-masked", "layer": "2", "head": "3", "item": "0"})
    assert not at.exception and not at.warning
    assert at.title[0].value == "Attention"
    assert view(at) == ("decoder masked self-attention", 2, 3, 0)
    assert any(c.value.startswith("Causal mask: True above the diagonal") for c in at.caption)
    assert at.table[0].value.shape == (4, 4)  # M_target queries and keys
    cfg = at.session_state["cfg"]
    assert (cfg.N, cfg.E, cfg.nhead, cfg.layers, cfg.M_target) == (4, 16, 4, 3, 4)
    assert at.query_params == SMALL | {"vocab_size": "100", "d_ff": "64", "positional": "sinusoidal",
                                       "tie_embeddings": "False", "kind": "decoder-masked", "layer": "2",
                                       "head": "3", "item": "0"}


@pytest.mark.parametrize("text, kind", [("cross", "cross-attention"), ("Cross-Attention", "cross-attention"),
                                        ("decoder masked self-attention", "decoder masked self-attention"),
                                        (" ENCODER_SELF ", "encoder self-attention")])
def test_a_links_kind_is_read_by_its_short_name_or_its_label_in_any_case(text, kind):
    at = open_attention({"KIND": text})
    assert not at.exception and not at.warning
    assert at.radio(key="a_kind").value == kind
    assert at.query_params["kind"] == {"cross-attention": "cross", "encoder self-attention": "encoder-self",
                                       "decoder masked self-attention": "decoder-masked"}[kind]
    assert "KIND" not in at.query_params


GOOD_VIEW = {"kind": "cross", "layer": "1", "head": "2", "item": "1"}
SHOWN = {"kind": "cross-attention", "layer": 1, "head": 2, "item": 1}  # what GOOD_VIEW shows
BAD_VIEWS = [  # one bad choice in GOOD_VIEW at SMALL's sizes, what that choice shows instead, the warning
    ("kind", "banana", "encoder self-attention",
     "kind='banana' is not one of encoder-self, decoder-masked, cross; showing encoder-self."),
    ("kind", "<script>", "encoder self-attention",
     "kind='<script>' is not one of encoder-self, decoder-masked, cross; showing encoder-self."),
    ("layer", "3", 2, "layer=3 is not among this config's 3 layers, 0 to 2; showing layer 2."),
    ("head", "99999999999999999999", 3,
     "head=99999999999999999999 is not among this config's 4 heads, 0 to 3; showing head 3."),
    ("item", "-1", 0, "item=-1 is not among this config's 4 batch items, 0 to 3; showing item 0."),
    ("layer", "1.5", 0, "layer='1.5' is not a whole number written in digits; showing layer 0."),
    ("head", "__import__('os')", 0,
     "head=\"__import__('os')\" is not a whole number written in digits; showing head 0."),
    ("item", "", 3, "item='' is not a whole number written in digits; showing item 3."),  # the last, padded one
]


@pytest.mark.parametrize("name, bad, shown, message", BAD_VIEWS, ids=[f"{n}={b}" for n, b, _, _ in BAD_VIEWS])
def test_a_bad_view_in_a_link_falls_back_and_says_so_in_the_links_warning(name, bad, shown, message):
    at = open_attention(SMALL | GOOD_VIEW | {name: bad})
    assert not at.exception, at.exception
    assert not at.error
    expected = SHOWN | {name: shown}
    assert view(at) == tuple(expected.values())
    assert link_warnings(at) == [message]
    assert not at.sidebar.warning
    # The URL names what is shown, and the heatmap is drawn for it.
    assert at.query_params[name] == {"encoder self-attention": "encoder-self"}.get(shown, str(shown))
    assert len(at.get("vega_lite_chart")) == 2
    # Once the learner picks another view, the warning about the old link goes.
    other = 1 if expected["head"] != 1 else 0
    at.selectbox(key="a_head").set_value(other).run()
    assert not at.warning
    assert at.query_params["head"] == str(other)


def test_a_link_with_bad_sizes_and_a_bad_view_says_both_in_one_warning():
    """The view is read at the sizes the link ends with: nhead=3 does not divide E=16, so 2 heads, not 3."""
    at = open_attention({"E": "16", "nhead": "3", "head": "2", "kind": "mask"})
    assert not at.exception
    assert link_warnings(at) == [
        "nhead=3 does not divide E=16; using nhead=4 (E allows 1, 2, 4, 8, 16).",
        "kind='mask' is not one of encoder-self, decoder-masked, cross; showing encoder-self.",
    ]
    assert view(at)[:3] == ("encoder self-attention", 0, 2)


def test_the_attention_pages_choices_go_into_the_url_and_shrink_with_the_config():
    at = open_attention(SMALL)
    assert at.query_params["kind"] == "encoder-self"
    assert (at.query_params["layer"], at.query_params["head"], at.query_params["item"]) == ("0", "0", "3")
    at.radio(key="a_kind").set_value("cross-attention").run()
    at.selectbox(key="a_layer").set_value(2).run()
    assert (at.query_params["kind"], at.query_params["layer"]) == ("cross", "2")
    at.sidebar.slider(key="w_layers").set_value(1).run()  # layer 2 is gone: back to the first
    assert at.query_params["layer"] == "0" and at.selectbox(key="a_layer").value == 0
    assert at.query_params["layers"] == "1" and at.query_params["kind"] == "cross"


def test_the_attention_pages_choices_stay_off_other_pages_and_their_warnings_too():
    """A bad view in an attention link is that page's business: the explorer neither warns about it nor
    carries the view in its own URL, and a copied attention link opened at another page is read quietly
    (its layer= is no near miss of layers, which it also names)."""
    at = open_attention(SMALL | {"kind": "banana", "layer": "9"})
    assert len(link_warnings(at)) == 2
    at.switch_page("pages/explorer.py").run()
    assert not at.exception and not at.warning
    assert "kind" not in at.query_params and "layer" not in at.query_params
    assert at.query_params["layers"] == "3"
    at.switch_page("pages/attention.py").run()  # back on its own page, the warning is still there for it
    assert len(link_warnings(at)) == 2

    copied = SMALL | {"kind": "cross", "layer": "1", "head": "5", "item": "banana"}
    for page in ("pages/explorer.py", "pages/positional.py", "pages/quiz.py"):
        at = make_app(copied)
        at.switch_page(page)
        at.run()
        assert not at.exception and not at.warning, page
        assert set(at.query_params) == set(CONFIG_FIELDS) | ({"topic"} if page.endswith("quiz.py") else set()), page
        assert at.session_state["cfg"].layers == 3


def test_read_choice_never_raises_on_odd_values():
    cfg = DEFAULT
    for choice in PAGE_CHOICES["attention"]:
        for raw in ["", " ", "nan", "-0", "1e3", "0x10", "9" * 5000, "Ｅ", "１", None, "[x](y)"]:
            value, warning = read_choice(choice, raw, cfg)
            assert value in choice.options(cfg), (choice.name, raw)
            assert warning is None or warning.startswith(f"{choice.name}="), warning


def test_a_link_opens_the_quiz_on_a_topic():
    """A lesson on masking links to its questions: ?topic=masking, in any case, with spaces or hyphens."""
    for text in ("masking", " Masking "):
        at = make_app({"topic": text})
        at.switch_page("pages/quiz.py")
        at.run()
        assert not at.exception and not at.warning
        assert at.selectbox(key="quiz_topic").value == "Masking"
        assert at.header[0].value == "Q1 · Masking"
        assert any(m.value == "Question 1 of 7" for m in at.markdown)  # the topic's 7 questions
        assert at.query_params["topic"] == "masking"
    at.selectbox(key="quiz_topic").set_value("The choice of d_k").run()
    assert at.query_params["topic"] == "the-choice-of-d-k"
    at = make_app({"topic": "The choice of d_k"})
    at.switch_page("pages/quiz.py")
    assert at.run().selectbox(key="quiz_topic").value == "The choice of d_k"


def test_an_unknown_quiz_topic_in_a_link_falls_back_to_all_topics_and_says_so():
    at = make_app({"topic": "transformers!"})
    at.switch_page("pages/quiz.py")
    at.run()
    assert not at.exception
    assert at.selectbox(key="quiz_topic").value == "All topics"
    [message] = link_warnings(at)
    assert message.startswith("topic='transformers!' is not one of all-topics, rnn-vs-transformer, skip-connections,")
    assert message.endswith(", parameter-counts, shapes; showing all-topics.")
    assert at.query_params["topic"] == "all-topics"
    at.switch_page("pages/attention.py").run()  # the quiz's warning stays on the quiz
    assert not at.warning and "topic" not in at.query_params


def test_a_near_miss_of_a_pages_own_name_is_pointed_at_that_name_and_a_newline_cannot_split_the_warning():
    """On the attention page heads=2 was answered with "did you mean nhead?", which would change the
    model, not the head shown; and kinds=cross went unmentioned. A newline typed into a link's name or
    number (%0A) started a new paragraph in the warning's list."""
    own = [choice.name for choice in PAGE_CHOICES["attention"]]
    assert link_params({"heads": "2", "kinds": "cross"}, own=own)[1] == [
        "heads='2' names no setting, so it was left out; did you mean head?",
        "kinds='cross' names no setting, so it was left out; did you mean kind?"]
    assert link_params({"heads": "2"})[1] == ["heads='2' names no setting, so it was left out; did you mean nhead?"]
    at = open_attention({"nhead\n\nx": "1", "layer": "\n\n9"})
    assert not at.exception
    assert link_warnings(at) == ["nhead x='1' names no setting, so it was left out; did you mean nhead?",
                                 "layer=9 is not among this config's 2 layers, 0 to 1; showing layer 1."]


def test_a_links_names_are_read_in_any_case_in_one_place_the_exact_spelling_first():
    """The sidebar's settings and a page's own choices read a link's names alike (in_any_case): in any case,
    without spaces around them, and where one name comes twice the exact spelling wins wherever it stands."""
    assert in_any_case({"e": "64", " KIND ": "x", "E": "32"}, ["E"]) == {"e": ("E", "32"), "kind": (" KIND ", "x")}
    assert link_params({"e": "64", "E": "32"})[0] == {"E": "32"}
    assert read_choices(PAGE_CHOICES["attention"], {"KIND": "banana", "kind": "cross"}, DEFAULT) == (
        {"a_kind": "cross-attention"}, [])
