"""The URL carries the config: a link reproduces the view, and garbage falls back with a warning."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from core import DEFAULT, PRESETS
from quizzes import TOPICS, Context
from ui.link.choices import PAGE_CHOICES, names_any_case, quiz_order, read_choice, read_choices
from ui.link.config import CONFIG_FIELDS, SIZE_FIELDS, link_params, snap_config
from tests.support.apptest import (answer, architecture_opened, browser_reports, make_app, open_page, running,
                                   score_line, stored_copy)

GARBAGE = [  # query, what the config must become, a word the warning must contain
    ({"E": "abc"}, {"E": DEFAULT.E}, "E='abc'"),
    ({"nhead": "0"}, {"nhead": 1}, "nhead=0"),
    ({"M": "999999999"}, {"M": 8192}, "M=999999999"),
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
    ({"M": "999999999"}, {"M": 8192}, "outside the slider's range, 1 to 8192"),
    # Past the 4300 digits Python reads: still a number, quoted by its first digits and its length.
    ({"N": "9" * 5000}, {"N": 64}, "N=999999… (5,000 digits) is outside the slider's range, 1 to 64; using 64."),
    ({"N": "0" * 5000 + "99"}, {"N": 64}, "N=99 is outside the slider's range"),  # leading zeros do not count
    ({"E": "64", "nhead": "-" + "1" * 4400}, {"nhead": 1}, "nhead=-111111… (4,400 digits) is not a number of heads"),
    # Python's underscores between digits do not count either, however long the number.
    ({"N": "9_" * 4400 + "9"}, {"N": 64}, "N=999999… (4,401 digits) is outside the slider's range, 1 to 64"),
    # A near miss of a setting's name, typed off a slide, is said, not dropped in silence.
    ({"E": "64", "nheads": "8"}, {"E": 64, "nhead": 2}, "nheads='8' names no setting, so it was left out; did "
                                                        "you mean nhead?"),
    # Every warning quotes a value the same way: on one line, runs of spaces as one.
    ({"N": "3\n\n  x"}, {"N": DEFAULT.N}, "N='3 x' is not a whole number"),
    ({"positional": "learned\t\tnow"}, {"positional": "sinusoidal"}, "positional='learned now' is not"),
    ({"tie_embeddings": "  no\nway "}, {"tie_embeddings": False}, "tie_embeddings='no way' is not true or false"),
    ({"E": "64", "nheads": "8 \n  heads"}, {"E": 64}, "nheads='8 heads' names no setting"),
]
PAPER_BASE_NAME = next(name for name in PRESETS if name.startswith("Paper base"))


@pytest.mark.parametrize("query, expected, word", GARBAGE, ids=[str(q) for q, _, _ in GARBAGE])
def test_url_garbage_warns_and_falls_back(query, expected, word):
    at = make_app(query).run()
    assert not at.exception, at.exception
    cfg = running(at)
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
    shows. A name like no setting at all, as a platform adds to a shared link, is named in the warning."""
    at = make_app({"n": "4", "m": "16", "d_model": "64", "Nhead": "8", "utm_source": "lms"}).run()
    assert not at.exception
    assert link_warnings(at) == ["utm_source='lms' names no setting, so it was left out."]
    cfg = running(at)
    assert (cfg.N, cfg.M, cfg.E, cfg.nhead) == (4, 16, 64, 8)
    assert at.query_params["N"] == "4" and "n" not in at.query_params and "utm_source" not in at.query_params
    values, warnings = link_params({"E": "32", "e": "64", "dim_feedforward": "100", "layer": "3"})
    assert values == {"E": "32", "d_ff": "100"}  # the exact name wins over another case, and says so
    assert warnings == ["layer='3' names no setting, so it was left out; did you mean layers?",
                        "E=32 and e=64 both set E; E=32 was used and e=64 left out."]


TWICE = [  # a link that gives one setting two values, what the config becomes, and the link's warning
    ({"E": "32", "d_model": "64"}, {"E": 32}, ["E=32 and d_model=64 both set E; E=32 was used and d_model=64 "
                                               "left out."]),
    # The slider's own name wins wherever it stands, as before; the sentence lists the names in the link's order.
    ({"d_model": "64", "E": "32"}, {"E": 32}, ["d_model=64 and E=32 both set E; E=32 was used and d_model=64 "
                                               "left out."]),
    ({"N": "4", "n": "8"}, {"N": 4}, ["N=4 and n=8 both set N; N=4 was used and n=8 left out."]),
    # One name twice: Streamlit reads the last (st.query_params.get), and get_all shows the page the first.
    ({"N": ["3", "5"]}, {"N": 5}, ["N=3 and N=5 both set N; N=5 was used and N=3 left out."]),
    ({"dim_feedforward": "100", "D_FF": "48", "d_ff": "64"}, {"d_ff": 64},
     ["dim_feedforward=100, D_FF=48 and d_ff=64 all set d_ff; d_ff=64 was used, dim_feedforward=100 and "
      "D_FF=48 left out."]),
    # A word is quoted; a number too long to quote whole is named by its first digits and its length.
    ({"positional": ["learned", "sinusoidal"]}, {"positional": "sinusoidal"},
     ["positional='learned' and positional='sinusoidal' both set positional; positional='sinusoidal' was used and "
      "positional='learned' left out."]),
    ({"N": ["9" * 5000, "5"]}, {"N": 5}, ["N=999999… (5,000 digits) and N=5 both set N; N=5 was used and "
                                          "N=999999… (5,000 digits) left out."]),
    # The value used is then read as any other: moved to the slider's nearest step, in a sentence of its own.
    ({"E": "100", "d_model": "64"}, {"E": 96}, ["E=100 and d_model=64 both set E; E=100 was used and "
                                                "d_model=64 left out.",
                                                "E=100 is not one of the slider's steps; using the nearest, 96."]),
]


@pytest.mark.parametrize("query, expected, messages", TWICE, ids=[str(q) for q, _, _ in TWICE])
def test_a_setting_given_two_values_says_which_was_used_and_which_left_out(query, expected, messages):
    """?E=32&d_model=64 used E = 32 without a word about d_model=64, and ?N=4&n=8 or ?N=3&N=5 each
    dropped a value as quietly: a teacher who had edited one of them saw sizes they had not asked for."""
    at = make_app(query).run()
    assert not at.exception
    cfg = running(at)
    for field, value in expected.items():
        assert getattr(cfg, field) == value, field
    assert link_warnings(at) == messages
    assert at.query_params["E"] == str(cfg.E) and "d_model" not in at.query_params and "n" not in at.query_params


def test_a_setting_given_twice_alike_is_read_quietly():
    """The same value under two names, or one name twice, or as the same number written another way,
    leaves nothing out: no warning."""
    for query in ({"E": "32", "d_model": "32"}, {"N": ["4", "4"]}, {"E": "32", "D_MODEL": "032"},
                  {"positional": "learned", "Positional": "Learned"}, {"tie_embeddings": ["true", "1"]},
                  {"tie_embeddings": ["false", ""]}):
        at = make_app(query).run()
        assert not at.exception and not at.warning, query
    assert link_params({"N": ["5", "3", "5"]}) == ({"N": "5"}, ["N=5 and N=3 both set N; N=5 was used and "
                                                                "N=3 left out."])
    # true and false words are alike for tie_embeddings alone: N=1 and N=yes are two values, as are 1 and 01,
    # which tie_embeddings does not read as true.
    assert link_params({"N": ["1", "yes"]})[1] == ["N=1 and N='yes' both set N; N='yes' was used and N=1 left out."]
    assert link_params({"tie_embeddings": ["01", "1"]})[1] == [
        "tie_embeddings='01' and tie_embeddings='1' both set tie_embeddings; tie_embeddings='1' was used and "
        "tie_embeddings='01' left out."]


def test_a_pages_own_choice_given_two_values_says_which_was_used():
    """?tab=curves&tab=compare opened the comparison and dropped the curves without a word, as the
    settings had until they said so (_set_twice); the page's choices say it too, on their page only."""
    at = open_page("positional", {"tab": ["curves", "compare"]})
    assert at.session_state["p_tab"] == "Sinusoidal vs learned"
    assert link_warnings(at) == ["tab='curves' and tab='compare' both set tab; tab='compare' was used and "
                                 "tab='curves' left out."]
    at = open_page("attention", {"KIND": "encoder", "kind": "cross"})  # the choice's own spelling wins
    assert at.session_state["a_kind"] == "cross-attention"
    assert link_warnings(at) == ["KIND='encoder' and kind='cross' both set kind; kind='cross' was used and "
                                 "KIND='encoder' left out."]
    at = open_page("attention", {"layers": "3", "layer": ["2", "02"], "Kind": "Cross", "kind": "cross"})
    assert not at.warning  # values that read alike leave nothing out


def test_a_link_reproduces_the_config():
    query = {"N": "3", "M": "12", "M_target": "5", "E": "24", "nhead": "6", "vocab_size": "50", "layers": "3",
             "d_ff": "48", "positional": "learned", "tie_embeddings": "True"}
    at = make_app(query).run()
    assert not at.exception
    assert not at.warning
    cfg = running(at)
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
# The paper's parts, as the app writes them into every link of the default family.
PAPERS_PARTS = {"arch": "encoder-decoder", "nhead_kv": "4", "norm_first": "false", "norm": "layernorm",
                "activation": "relu", "bias": "true"}


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
    cfg = running(at)
    assert (cfg.N, cfg.E, cfg.nhead, cfg.layers, cfg.M_target) == (4, 16, 4, 3, 4)
    assert at.query_params == SMALL | PAPERS_PARTS | {"vocab_size": "100", "d_ff": "64", "positional": "sinusoidal",
                                                      "tie_embeddings": "false", "kind": "decoder-masked",
                                                      "layer": "2", "head": "3", "item": "0"}


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
    ("head", "   " + "9" * 39, 3,
     "head=999999999999999999999999999999999999999 is not among this config's 4 heads, 0 to 3; showing head 3."),
    ("layer", "7" * 4301, 2,
     "layer=777777… (4,301 digits) is not among this config's 3 layers, 0 to 2; showing layer 2."),
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
        own = {choice.name for choice in PAGE_CHOICES.get(page.removeprefix("pages/").removesuffix(".py"), ())
               if choice.when(running(at))}  # the explorer's G is a decoder-only model's
        assert set(at.query_params) == set(SIZE_FIELDS) | own, page
        assert running(at).layers == 3


@pytest.mark.parametrize("page", list(PAGE_CHOICES))
def test_read_choice_never_raises_on_odd_values(page):
    cfg = DEFAULT
    for choice in PAGE_CHOICES[page]:
        for raw in ["", " ", "nan", "-0", "1e3", "0x10", "9" * 5000, "Ｅ", "１", None, "[x](y)", ",,", "1,1,1", "Q",
                    ",".join(map(str, range(20)))]:
            value, warning = read_choice(choice, raw, cfg)
            assert choice.offers(value, choice.options(cfg, {})), (choice.name, raw)
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
    topics = ", ".join(re.sub(r"[^a-z0-9]+", "-", topic.lower()).strip("-") for topic in ["All topics", *TOPICS])
    assert message == f"topic='transformers!' is not one of {topics}; showing all-topics."
    assert message.startswith("topic='transformers!' is not one of all-topics, rnn-vs-transformer, skip-connections,")
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
    """The sidebar's settings and a page's own choices read a link's names alike (names_any_case): in any case,
    without spaces around them, and where one name comes twice the exact spelling wins wherever it stands."""
    assert names_any_case({"e": "64", " KIND ": "x", "E": "32"}, ["E"]) == {"e": ("E", "32"), "kind": (" KIND ", "x")}
    assert link_params({"e": "64", "E": "32"})[0] == {"E": "32"}
    assert read_choices(PAGE_CHOICES["attention"], {"KIND": "banana", "kind": "cross"}, DEFAULT) == (
        {"a_kind": "cross-attention"}, [])


def curves_described(at) -> str:
    """The sentence the curves chart gives a screen reader, which names the dimensions drawn."""
    specs = [chart.proto.spec for chart in at.get("vega_lite_chart")]
    [spec] = [spec for spec in specs if "sinusoidal dim" in spec]
    return re.search(r"sinusoidal dimensions [0-9, ]*[0-9]", spec).group()


def test_a_link_opens_the_positional_page_on_its_tab_and_curves():
    """A lesson on frequencies sends a link that opens on the curves it talks about, at its own E."""
    at = open_page("positional", {"E": "64", "nhead": "4", "tab": "curves", "dims": "0,1,30,31"})
    assert not at.exception and not at.warning
    assert at.session_state["p_tab"] == "Dimensions as curves"
    assert at.multiselect(key="p_dims_64").value == [0, 1, 30, 31]
    assert curves_described(at) == "sinusoidal dimensions 0, 1, 30, 31"
    assert (at.query_params["tab"], at.query_params["dims"]) == ("curves", "0,1,30,31")
    # The tab's label is read too, in any case; dimensions may be written with spaces.
    at = open_page("positional", {"Tab": "Sinusoidal vs LEARNED", "dims": " 3 2 "})
    assert not at.warning and at.session_state["p_tab"] == "Sinusoidal vs learned"
    assert at.multiselect(key="p_dims_16").value == [3, 2] and at.query_params["dims"] == "3,2"


def test_the_positional_pages_choices_go_into_the_url_and_each_E_keeps_its_own_curves():
    at = open_page("positional", {})
    assert (at.query_params["tab"], at.query_params["dims"]) == ("table", "0,1,8,9,14,15")  # E = 16's default
    at.multiselect(key="p_dims_16").set_value([0, 15]).run()
    at.session_state["p_tab"] = "Dimensions as curves"  # as a click on the tab sets it
    at.run()
    assert (at.query_params["tab"], at.query_params["dims"]) == ("curves", "0,15")
    at.sidebar.select_slider(key="w_E").set_value(32).run()
    assert at.query_params["dims"] == "0,1,16,17,30,31" and at.query_params["tab"] == "curves"
    at.sidebar.select_slider(key="w_E").set_value(16).run()
    assert at.query_params["dims"] == "0,15"


BAD_POSITIONAL = [  # a bad choice in a positional link, what it shows instead, the warning
    ({"tab": "heatmap"}, ("M × E table", [0, 1, 8, 9, 14, 15]),
     "tab='heatmap' is not one of table, curves, compare; showing table."),
    ({"dims": "0,x,99,3,3"}, ("M × E table", [0, 3]),
     "dims='0,x,99,3,3' is not a list of at most 8 of the page's 16 dimensions (0 to 15), in digits; showing "
     "dims 0,3."),
    ({"dims": "-1;1.5"}, ("M × E table", [0, 1, 8, 9, 14, 15]),
     "dims='-1;1.5' is not a list of at most 8 of the page's 16 dimensions (0 to 15), in digits; showing "
     "dims 0,1,8,9,14,15."),
    ({"dims": ",".join(map(str, range(10)))}, ("M × E table", list(range(8))),
     "dims='0,1,2,3,4,5,6,7,8,9' is not a list of at most 8 of the page's 16 dimensions (0 to 15), in digits; "
     "showing dims 0,1,2,3,4,5,6,7."),
    # Past E = 4096 the page offers its six default dimensions only, and says which.
    ({"E": "8192", "nhead": "8", "dims": "5"}, ("M × E table", [0, 1, 4096, 4097, 8190, 8191]),
     "dims='5' is not a list of at most 8 of the page's 6 dimensions (0, 1, 4096, 4097, 8190, 8191), in digits; "
     "showing dims 0,1,4096,4097,8190,8191."),
]


@pytest.mark.parametrize("query, shown, message", BAD_POSITIONAL, ids=[str(q) for q, _, _ in BAD_POSITIONAL])
def test_a_bad_positional_choice_in_a_link_falls_back_and_says_so(query, shown, message):
    at = open_page("positional", query)
    assert not at.exception and not at.error
    E = running(at).E
    assert (at.session_state["p_tab"], at.multiselect(key=f"p_dims_{E}").value) == shown
    assert link_warnings(at) == [message]
    assert at.query_params["dims"] == ",".join(map(str, shown[1]))
    at.multiselect(key=f"p_dims_{E}").set_value(shown[1][:1]).run()  # the learner picks: the warning goes
    assert not at.warning and at.query_params["dims"] == str(shown[1][0])


def header(at) -> str:
    return at.main.header[0].value


def test_a_link_opens_the_quiz_on_one_question_by_the_number_it_shows_or_by_its_id():
    """A teacher projects "Q3 · Masking" and sends a link that opens on it: q= counts as the quiz does, in
    the link's topic and shuffle; Q3 as the quiz writes it, or the id the answer key gives, read too."""
    for q in ("3", "Q3", " q3 ", "mask-probe"):
        at = open_page("quiz", {"topic": "masking", "q": q})
        assert not at.exception and not at.warning, q
        assert header(at) == "Q3 · Masking" and at.radio(key="quiz_mode").value == "One question at a time"
        assert [r.key for r in at.radio if r.key.startswith("ans_")] == ["ans_mask-probe"]
        assert {k: at.query_params[k] for k in ("topic", "seed", "mode", "q")} == {
            "topic": "masking", "seed": "0", "mode": "one", "q": "3"}
    shuffled = quiz_order("Masking", 7)
    at = open_page("quiz", {"topic": "masking", "seed": "7", "q": "2"})
    assert not at.warning and header(at) == "Q2 · Masking"
    assert any(m.value == shuffled[1].text(Context(running(at))) for m in at.markdown)
    at = open_page("quiz", {"q": "42"})  # the answer key's Q, over all topics
    assert header(at) == "Q42 · Masking" and at.query_params["topic"] == "all-topics"


def test_next_previous_and_a_new_shuffle_go_into_the_quizs_link():
    at = open_page("quiz", {"topic": "masking"})
    assert at.query_params["q"] == "1"
    at.button(key="quiz_next").click().run()
    assert header(at) == "Q2 · Masking" and at.query_params["q"] == "2"
    at.number_input(key="quiz_seed").set_value(7).run()  # a new order, from its top
    assert header(at) == "Q1 · Masking" and (at.query_params["seed"], at.query_params["q"]) == ("7", "1")
    assert at.text_input(key=f"ans_{quiz_order('Masking', 7)[0].id}") is not None
    at.radio(key="quiz_mode").set_value("A topic set").run()
    assert at.query_params["mode"] == "set" and len(at.main.header) == 7


def come_back_to(at, choices: dict[str, str]) -> None:
    """Put in the app's URL a link to the quiz, as an entry of the browser's history has it: the config,
    and these choices alone of the quiz's."""
    config = {name: at.query_params[name] for name in CONFIG_FIELDS if name in at.query_params}
    at.query_params.clear()
    at.query_params.update(config | choices)


def follow(at, choices: dict[str, str]) -> None:
    """The app's tab follows a link to the quiz as Back or Forward brings one (come_back_to)."""
    come_back_to(at, choices)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("ui.sidebar.config.history_navigation", lambda: True)
        at.run()
    assert not at.exception


def test_a_link_to_a_question_opens_it_one_at_a_time_and_ends_a_review_only_without_it():
    """A link's q counts in the topic, not in one learner's review of what they missed: a review that holds
    its question goes on (Back and Forward while reviewing), one that does not ends, so that the question
    shows. And a link to a question opens it one at a time, unless the link names the mode."""
    at = open_page("quiz", {"topic": "masking", "q": "2"})
    answer(at, "mask-blocked", "12345")  # wrong: in the review
    at.radio(key="quiz_mode").set_value("A topic set").run()
    at.toggle(key="quiz_review").set_value(True).run()
    follow(at, {"topic": "masking", "q": "2"})  # a link with the config, with q but no mode
    assert not at.warning and at.toggle(key="quiz_review").value is True
    assert at.radio(key="quiz_mode").value == "One question at a time"
    # Its number in the topic, as the link's q= counts, in the review too (the review's first question)
    assert header(at) == "Q2 · Masking" and at.text_input(key="ans_mask-blocked") is not None
    follow(at, {"topic": "masking", "q": "4"})  # not missed: the review ends
    assert header(at) == "Q4 · Masking" and at.toggle(key="quiz_review").value is False
    at = open_page("quiz", {"topic": "masking", "mode": "set", "q": "2"})
    assert at.radio(key="quiz_mode").value == "A topic set" and len(at.main.header) == 7
    assert at.query_params["q"] == "2"


# The quiz numbers the questions about the sidebar's model: the default's, the paper's encoder-decoder.
PAPERS_QUESTIONS = quiz_order('All topics', 0, DEFAULT)

@pytest.mark.parametrize("change", ["topic", "seed"])
def test_in_a_review_a_new_topic_or_shuffle_links_the_question_shown(change):
    """In a review, a new topic or shuffle put the link's q= on the topic's first question, and the page then
    moved to the review's first, which the learner had missed: the link named a question not on screen, and
    Back then Forward opened that other one and ended the review."""
    at = open_page("quiz", {"topic": "masking", "q": "2"})
    answer(at, "mask-blocked", "12345")  # Q2 of Masking, wrong: in the review
    at.selectbox(key="quiz_topic").set_value("Shapes").run()
    at.toggle(key="quiz_review").set_value(True).run()
    if change == "topic":
        at.selectbox(key="quiz_topic").set_value("Masking").run()
    else:
        at.selectbox(key="quiz_topic").set_value("Masking").run()
        at.number_input(key="quiz_seed").set_value(3).run()
    seed = int(at.query_params["seed"])
    linked = quiz_order("Masking", seed)[int(at.query_params["q"]) - 1].id
    assert linked == "mask-blocked" and at.text_input(key="ans_mask-blocked") is not None
    follow(at, {"topic": "masking", "seed": str(seed), "mode": "one", "q": at.query_params["q"]})  # Back, Forward
    assert at.toggle(key="quiz_review").value is True and at.text_input(key="ans_mask-blocked") is not None


BAD_QUIZ = [  # a bad choice in a quiz link, the header shown instead, the warning
    ({"topic": "masking", "q": "99"}, "Q7 · Masking", "q=99 is not among Masking's 7 questions, 1 to 7; showing q 7."),
    ({"topic": "masking", "q": "0"}, "Q1 · Masking", "q=0 is not among Masking's 7 questions, 1 to 7; showing q 1."),
    ({"q": "-5"}, "Q1 · RNN vs. Transformer",
     f"q=-5 is not among the quiz's {len(PAPERS_QUESTIONS)} questions, 1 to {len(PAPERS_QUESTIONS)}; showing q 1."),
    ({"topic": "masking", "q": "shape-memory"}, "Q1 · Masking",  # another topic's question
     "q='shape-memory' is neither a whole number written in digits nor the id of one of Masking's 7 questions; "
     "showing q 1."),
    ({"topic": "masking", "q": "__import__('os')"}, "Q1 · Masking",
     "q=\"__import__('os')\" is neither a whole number written in digits nor the id of one of Masking's 7 "
     "questions; showing q 1."),
    ({"topic": "masking", "seed": "-1", "q": "2"}, "Q2 · Masking",
     "seed=-1 is not among the 1,000,001 shuffle seeds, 0 to 1,000,000; showing seed 0."),
    ({"topic": "masking", "mode": "all", "q": "2"}, "Q2 · Masking",
     "mode='all' is not one of one, set; showing one."),
]


@pytest.mark.parametrize("query, shown, message", BAD_QUIZ, ids=[str(q) for q, _, _ in BAD_QUIZ])
def test_a_bad_question_in_a_quiz_link_falls_back_and_says_so(query, shown, message):
    at = open_page("quiz", query)
    assert not at.exception and not at.error
    assert header(at) == shown
    assert link_warnings(at) == [message]
    assert at.query_params["q"] == shown.split(" ")[0].removeprefix("Q")
    at.button(key="quiz_next").click().run()  # the learner moves on: the warning goes
    assert not at.warning


def test_a_link_to_a_question_keeps_the_learners_progress_scores_and_drafts():
    """Opening a teacher's link mid-quiz, in the same tab (as Back and Forward bring a link) or in a new one,
    moves to its question and loses nothing: answers, the score, the copy the browser keeps, a draft."""
    at = open_page("quiz", {"topic": "masking", "q": "2"})
    browser_reports(at, "")
    answer(at, "mask-blocked", "12345")
    for _ in range(3):
        at.button(key="quiz_next").click().run()
    at.text_input(key="ans_mask-attn-shape").input("(N, M)").run()  # a draft, not checked
    score = score_line(at)
    assert "**1 wrong**" in score
    saved = stored_copy(at)
    follow(at, {"topic": "shapes", "q": "3"})
    assert header(at) == "Q3 · Shapes" and score_line(at) == score
    follow(at, {"topic": "masking", "q": "5"})
    assert header(at) == "Q5 · Masking" and at.text_input(key="ans_mask-attn-shape").value == "(N, M)"
    assert score_line(at) == score and stored_copy(at) == saved
    later = open_page("quiz", {"topic": "masking", "q": "2"})  # a new tab: the browser's copy comes back
    browser_reports(later, saved)
    assert header(later) == "Q2 · Masking" and score_line(later) == score
    assert any(e.value.startswith("Not quite. You answered `12345`") for e in later.error)


def test_a_link_opens_the_training_lab_on_its_task_and_mask_but_never_starts_a_run():
    """A lesson on the mask sends a link that opens the reversal task without it: the learner presses Train."""
    at = open_page("training_lab", {"task": "reversal", "mask": "off"})
    assert not at.exception and not at.warning
    assert at.session_state["tl_task"] == "Reversal: does the mask work?"
    assert at.toggle(key="tl_rev_nomask").value is True
    assert "tl_rev_training" not in at.session_state and "tl_lm_training" not in at.session_state
    assert not at.button(key="tl_rev_run").disabled and any("Press **Train**" in c.value for c in at.caption)
    assert (at.query_params["task"], at.query_params["mask"]) == ("reversal", "off")
    at.toggle(key="tl_rev_nomask").set_value(False).run()
    at.session_state["tl_task"] = "A tiny language model"  # as a click on the tab sets it
    at.run()
    assert (at.query_params["task"], at.query_params["mask"]) == ("language-model", "on")
    at = open_page("training_lab", {"TASK": "A tiny language model"})
    assert not at.warning and at.session_state["tl_task"] == "A tiny language model"
    assert at.toggle(key="tl_rev_nomask").value is False and at.query_params["mask"] == "on"


@pytest.mark.parametrize("query, message", [
    ({"task": "gpt"}, "task='gpt' is not one of reversal, language-model; showing reversal."),
    # true is no way to say off: the toggle's state is "remove the mask", the link's word the mask's
    ({"mask": "true"}, "mask='true' is not one of on, off; showing on."),
])
def test_a_bad_lab_choice_in_a_link_falls_back_and_says_so(query, message):
    at = open_page("training_lab", query)
    assert not at.exception
    assert link_warnings(at) == [message]
    assert at.session_state["tl_task"] == "Reversal: does the mask work?"
    assert at.toggle(key="tl_rev_nomask").value is False
    assert "tl_rev_training" not in at.session_state


def test_a_pages_copied_link_opened_at_another_page_is_read_quietly():
    """A copied link names its page's choices beside the whole config; opened at another page (its path
    edited), it gives that page the config without a word: mode= is near d_model, but the link gives E."""
    config = {name: str(getattr(DEFAULT, name)) for name in CONFIG_FIELDS}
    copied = {"positional": {"tab": "curves", "dims": "0,1"}, "training_lab": {"task": "reversal", "mask": "off"},
              "quiz": {"topic": "masking", "seed": "0", "mode": "one", "q": "3"}}
    for source, choices in copied.items():
        assert link_params(config | choices, own=[], elsewhere={name: source for name in choices})[1] == [], source
        for page in {"explorer", "attention", *copied} - {source}:
            at = open_page(page, config | choices)
            assert not at.exception and not at.warning, (source, page)


def test_another_pages_choice_in_a_hand_typed_link_is_said_to_be_that_pages():
    """?mode=one on the explorer was taken for a near miss of d_model ("did you mean E?"). It names
    the page whose choice it is; a copied link, which gives the config too, stays quiet (above)."""
    for page, query, message in [
        ("explorer", {"mode": "one"}, "mode='one' is a choice of the /quiz page's links, not this page's, so it "
                                      "was left out."),
        ("quiz", {"Kind": "cross"}, "Kind='cross' is a choice of the /attention page's links, not this page's, so "
                                    "it was left out."),
        # A choice that is also a near miss of a setting keeps its hint, and with settings given it is one.
        ("explorer", {"layer": "3"}, "layer='3' is a choice of the /attention page's links, not this page's, so "
                                     "it was left out; did you mean layers?"),
        ("explorer", {"E": "64", "layer": "3"}, "layer='3' names no setting, so it was left out; did you mean "
                                                "layers?"),
    ]:
        at = open_page(page, query)
        assert not at.exception
        assert link_warnings(at) == [message]


def test_the_positional_and_lab_tabs_are_as_they_were_left_after_a_visit_elsewhere():
    """Streamlit forgets a widget the page does not draw, and tabs keep no state of their own across pages:
    the positional page and the lab came back on their first tab, unlike every other choice."""
    at = open_page("positional", {"tab": "compare"})
    at.switch_page("pages/explorer.py").run()
    at.switch_page("pages/positional.py").run()
    assert at.session_state["p_tab"] == "Sinusoidal vs learned" and at.query_params["tab"] == "compare"
    at = open_page("training_lab", {"task": "language-model"})
    at.switch_page("pages/quiz.py").run()
    at.switch_page("pages/training_lab.py").run()
    assert at.session_state["tl_task"] == "A tiny language model" and at.query_params["task"] == "language-model"


# One link per family with every part set, as the app writes it: the config's names, booleans as true/false.
FAMILY_LINKS = {
    "decoder-only": {"arch": "decoder-only", "nhead": "4", "nhead_kv": "2", "positional": "rope", "norm": "rmsnorm",
                     "activation": "swiglu", "norm_first": "true", "bias": "false"},
    "encoder-only": {"arch": "encoder-only", "nhead": "4", "nhead_kv": "1", "positional": "learned",
                     "norm": "layernorm", "activation": "gelu", "norm_first": "false", "bias": "true"},
    "encoder-decoder": {"arch": "encoder-decoder", "M_target": "5", "nhead": "4", "nhead_kv": "4",
                        "positional": "none", "norm": "rmsnorm", "activation": "gelu", "norm_first": "true",
                        "bias": "false", "tie_embeddings": "true"},
}


@pytest.mark.parametrize("family", list(FAMILY_LINKS))
def test_a_link_with_every_part_reproduces_the_family_and_the_app_writes_it_back_alike(family):
    link = FAMILY_LINKS[family]
    at = architecture_opened(make_app(link)).run()
    assert not at.exception and not at.warning
    cfg = running(at)
    for name, value in link.items():
        written = str(getattr(cfg, name)).lower() if isinstance(getattr(cfg, name), bool) else str(getattr(cfg, name))
        assert written == value, name
        assert at.query_params[name] == value, name  # the link the app writes back spells it the same
    assert ("M_target" in at.query_params) == (family == "encoder-decoder")  # a single stack has none
    assert at.sidebar.radio(key="w_arch").value == family
    # The round trip: the link the app wrote opens the same config, and names the preset it matches or none.
    again = architecture_opened(make_app(dict(at.query_params))).run()
    assert running(again) == cfg and not again.warning


def test_the_issues_example_link_reproduces_the_view():
    at = make_app({"arch": "decoder-only", "nhead_kv": "2", "positional": "rope", "norm": "rmsnorm",
                   "activation": "swiglu", "norm_first": "true"}).run()
    assert not at.exception and not at.warning
    cfg = running(at)
    assert (cfg.arch, cfg.nhead, cfg.nhead_kv, cfg.positional, cfg.norm, cfg.activation, cfg.norm_first,
            cfg.M_target) == ("decoder-only", 2, 2, "rope", "rmsnorm", "swiglu", True, None)


ARCH_GARBAGE = [  # query, what the config must become, the link's warning
    ({"arch": "banana"}, {"arch": "encoder-decoder"},
     "arch='banana' is not one of encoder-decoder, decoder-only, encoder-only; using encoder-decoder."),
    ({"nhead": "8", "E": "16", "nhead_kv": "3"}, {"nhead": 8, "nhead_kv": 4},
     "nhead_kv=3 does not divide nhead=8; using nhead_kv=4 (nhead=8 allows 1, 2, 4, 8)."),
    ({"nhead_kv": "0"}, {"nhead_kv": 1}, "nhead_kv=0 is not a number of K/V heads (at least 1); using nhead_kv=1."),
    ({"nhead_kv": "two"}, {"nhead_kv": 2},
     "nhead_kv='two' is not a whole number written in digits; using nhead_kv = nhead = 2."),
    ({"nhead_kv": "64"}, {"nhead_kv": 2},
     "nhead_kv=64 does not divide nhead=2; using nhead_kv=2 (nhead=2 allows 1, 2)."),
    ({"norm_first": "maybe"}, {"norm_first": False}, "norm_first='maybe' is not true or false; using false."),
    ({"bias": "nope"}, {"bias": True}, "bias='nope' is not true or false; using true."),
    ({"norm": "batchnorm"}, {"norm": "layernorm"},
     "norm='batchnorm' is not one of layernorm, rmsnorm; using layernorm."),
    ({"activation": "tanh"}, {"activation": "relu"},
     "activation='tanh' is not one of relu, gelu, swiglu; using relu."),
    ({"positional": "alibi"}, {"positional": "sinusoidal"},
     "positional='alibi' is not one of sinusoidal, learned, rope, none, relative; using sinusoidal."),
    ({"arch": "decoder-only", "M_target": "5"}, {"arch": "decoder-only", "M_target": None},
     "M_target=5 is the encoder-decoder's target length; arch=decoder-only has one sequence of M tokens, so it "
     "was left out."),
    # RoPE turns pairs of dimensions: E=24 with nhead=8 gives d_k = 3, which has none to turn.
    ({"E": "24", "nhead": "8", "positional": "rope"}, {"positional": "sinusoidal", "nhead": 8},
     "positional=rope turns pairs of dimensions, so it needs an even d_k; d_k = E/nhead = 24/8 = 3 is odd, so using "
     "sinusoidal."),
]


@pytest.mark.parametrize("query, expected, message", ARCH_GARBAGE, ids=[str(q) for q, _, _ in ARCH_GARBAGE])
def test_a_bad_part_in_a_link_warns_naming_it_and_falls_back(query, expected, message):
    at = make_app(query).run()
    assert not at.exception
    cfg = running(at)
    for field, value in expected.items():
        assert getattr(cfg, field) == value, field
    assert link_warnings(at) == [message]
    assert not at.sidebar.error


def test_old_links_keep_working_and_the_parts_are_read_in_any_spelling():
    """A link from before the families has no arch: it is the paper's encoder-decoder, with True and False
    as the app once wrote them. A part is read in any case, with _ or a space for the hyphen."""
    at = make_app({"N": "3", "M": "12", "M_target": "5", "tie_embeddings": "True", "positional": "learned"}).run()
    assert not at.exception and not at.warning
    cfg = running(at)
    assert (cfg.arch, cfg.M_target, cfg.tie_embeddings, cfg.norm_first, cfg.bias) == \
        ("encoder-decoder", 5, True, False, True)
    assert at.query_params["tie_embeddings"] == "true" and at.query_params["arch"] == "encoder-decoder"
    cfg, warnings = snap_config({"arch": " Decoder_Only", "norm": "RMSNorm", "activation": "SwiGLU",
                                 "positional": "RoPE", "norm_first": "TRUE", "bias": "0"})
    assert not warnings
    assert (cfg.arch, cfg.norm, cfg.activation, cfg.positional, cfg.norm_first, cfg.bias) == \
        ("decoder-only", "rmsnorm", "swiglu", "rope", True, False)


def test_a_part_given_twice_alike_is_quiet_and_given_two_values_says_which_was_used():
    assert link_params({"arch": ["decoder-only", "Decoder_Only"], "norm_first": ["true", "yes"]})[1] == []
    assert link_params({"arch": ["encoder-only", "decoder-only"]})[1] == [
        "arch='encoder-only' and arch='decoder-only' both set arch; arch='decoder-only' was used and "
        "arch='encoder-only' left out."]


def test_snap_config_never_raises_on_odd_parts():
    odd = ["", " ", "nan", "-1", "0", "1.5", "True", "rope", "9" * 5000, "Ｅ", None]
    for value in odd:
        values = {name: value for name in ("arch", "positional", "norm", "activation", "nhead_kv", "norm_first",
                                           "bias", "M_target")}
        cfg, _ = snap_config(values)
        assert cfg.nhead % cfg.nhead_kv == 0 and (cfg.positional != "rope" or cfg.d_k % 2 == 0)


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_is_on_the_sliders_and_its_link_reproduces_it(name):
    """A preset applies exactly (every size a real model has is a slider's step), and its link names it."""
    preset = PRESETS[name]
    assert snap_config(preset.to_dict()) == (preset, [])
    link = {field: str(getattr(preset, field)) for field in CONFIG_FIELDS if getattr(preset, field) is not None}
    cfg, warnings = snap_config(link)
    assert cfg == preset and not warnings


DECODER = {"arch": "decoder-only", "N": "2", "M": "6", "E": "16", "nhead": "4", "layers": "2", "vocab_size": "30"}
ROPE = DECODER | {"positional": "rope"}


def test_a_link_opens_the_kv_cache_at_its_G_and_the_slider_writes_G_back():
    """A lesson on the KV cache sends a link that opens on the cache length it talks about."""
    at = open_page("explorer", DECODER | {"G": "64"})
    assert not at.exception and not at.warning
    assert at.select_slider(key="x_kv_G").value == 64 and at.query_params["G"] == "64"
    assert any("= `(2, 2, 2, 4, 70, 4)`" in m.value for m in at.markdown)  # M + G = 70 positions
    at.select_slider(key="x_kv_G").set_value(256).run()
    assert at.query_params["G"] == "256"
    assert make_app().run().query_params.get("G") is None  # the paper's model has no KV cache, nor G in its link


@pytest.mark.parametrize("query, message", [
    (DECODER | {"G": "100"}, "G='100' is not one of 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096; "
                             "showing 8."),
    (DECODER | {"arch": "encoder-only", "G": "64"},
     "G='64' was left out: only a decoder-only model's page has a KV cache."),
])
def test_a_bad_or_misplaced_G_in_a_link_is_said(query, message):
    at = open_page("explorer", query)
    assert not at.exception
    assert link_warnings(at) == [message]
    if query["arch"] == "decoder-only":
        assert at.select_slider(key="x_kv_G").value == 8 and at.query_params["G"] == "8"
    else:
        assert "G" not in at.query_params


def test_a_link_opens_the_rope_check_at_its_positions():
    at = open_page("positional", ROPE | {"i": "7", "j": "3", "s": "1000"})
    assert not at.exception and not at.warning
    assert [at.number_input(key=k).value for k in ("p_rope_i", "p_rope_j", "p_rope_s")] == [7, 3, 1000]
    assert (at.query_params["i"], at.query_params["j"], at.query_params["s"]) == ("7", "3", "1000")
    scores = at.tabs[0].table[1].value
    assert list(scores["query at"]) == [7, 1007] and list(scores["key at"]) == [3, 1003]
    at.number_input(key="p_rope_s").set_value(5).run()
    assert at.query_params["s"] == "5"


@pytest.mark.parametrize("query, message", [
    (ROPE | {"i": "200000"}, "i=200000 is not among the RoPE check's 100,001 positions, 0 to 100,000; showing i "
                             "100000."),
    (ROPE | {"j": "two"}, "j='two' is not a whole number written in digits; showing j 2."),
    (DECODER | {"s": "3"}, "s='3' was left out: only a RoPE model's page checks the score at shifted positions."),
])
def test_a_bad_or_misplaced_rope_position_in_a_link_is_said(query, message):
    at = open_page("positional", query)
    assert not at.exception
    assert link_warnings(at) == [message]
    assert ("s" in at.query_params) == (query.get("positional") == "rope")


def readme_links() -> list[str]:
    """The example links in the README's Links section."""
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Links", 1)[1].split("```", 2)[1]
    return [line.strip() for line in section.splitlines() if line.startswith("/")]


@pytest.mark.parametrize("link", readme_links())
def test_every_example_link_in_the_readme_opens_its_page_without_a_warning(link):
    path, _, query = link.partition("?")
    at = open_page(path.strip("/") or "explorer", dict(parse_qsl(query)))
    assert not at.exception and not at.error and not at.warning, link
    for name, value in parse_qsl(query):
        if name != "preset":  # a preset is written back as its settings
            assert at.query_params[name] == value, (link, name)  # the page kept what the link asked for
