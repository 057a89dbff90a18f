"""The URL carries the config: a link reproduces the view, and garbage falls back with a warning."""

from __future__ import annotations

import re

import pytest

from core import DEFAULT, PRESETS
from pages.common import CONFIG_FIELDS, link_params, snap_config
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
