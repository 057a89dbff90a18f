"""The Decoding page: every strategy runs on the shipped character LM, opened by a link; the beams' tree, the
step-through and the side-by-side continuations are drawn; extreme knobs and hostile prompts get a message, never
a traceback."""

from __future__ import annotations

import json

import pytest

from core.decode.models import load_char_lm
from core.decode.run import decode
from tests.support.apptest import open_page


def texts(at) -> str:
    return " ".join([c.value for c in at.caption] + [m.value for m in at.markdown])


def test_beam_search_opens_by_link_with_its_tree_and_the_same_ids_as_core():
    at = open_page("decoding", {"strategy": "beam", "beams": "3", "G": "6", "prompt": "Shall I"})
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert spec["description"].startswith("A tree of the beams")
    expected = decode(load_char_lm(), "Shall I", "beam", 6, beams=3).continuations[0]
    codes = [c.value for c in at.code]
    assert codes[0] == "Shall I" and any(expected.replace("\n", "↵") == c for c in codes[1:])
    assert at.query_params["strategy"] == "beam" and at.query_params["prompt"] == "Shall I"
    at.slider(key="d_step").set_value(6).run()
    assert not at.exception
    assert "Step 6 of 6" in texts(at)


@pytest.mark.parametrize("query", [
    {"strategy": "greedy", "G": "1"},
    {"strategy": "sample", "G": "48", "T": "3", "k": "1", "p": "0.1", "seed": "1000000"},
    {"strategy": "mbr", "G": "5", "S": "16", "T": "0.1"},
    {"strategy": "beam", "G": "48", "beams": "8", "lp": "-1", "early": "never"},
    {"strategy": "beam", "G": "999", "beams": "0", "seed": "-5", "prompt": "x" * 2000},
])
def test_the_page_at_its_extremes(query):
    at = open_page("decoding", query)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert len(at.code) == 1 + 4  # the prompt, then one continuation per strategy


@pytest.mark.parametrize("prompt, words", [
    ("<script>alert(1)</script>", "not in this model"),
    ("\u202eevil\u202c \x1b[31m", "not in this model"),
    ("", "the prompt is empty"),
])
def test_a_hostile_prompt_gets_one_message(prompt, words):
    at = open_page("decoding", {"strategy": "greedy", "G": "4"})
    at.text_area(key="d_prompt").input(prompt).run()
    assert not at.exception, at.exception
    assert len(at.error) == 1 and words in at.error[0].value
    assert "\x1b" not in at.error[0].value and "\u202e" not in at.error[0].value


def test_a_ten_thousand_character_prompt_is_cut_to_the_context():
    at = open_page("decoding", {"strategy": "greedy", "G": "4"})
    at.text_area(key="d_prompt").input("To be " * 2000).run()
    assert not at.exception, at.exception
    assert not at.error
    assert "first 11,940 tokens left out" in texts(at)
    assert len(at.query_params["prompt"]) == 500  # the link keeps the prompt's first 500 characters
