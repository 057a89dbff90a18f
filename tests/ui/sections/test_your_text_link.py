"""The text's part of a link, read and written by ui.sections.your_text alone (the sidebar makes the one write per run)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.support.apptest import make_app


def script():
    import streamlit as st

    from core import DEFAULT
    from ui.sections.your_text import current_text, seed_from_link, text_link_values

    st.session_state["before"] = text_link_values("explorer")  # as the sidebar asks, before it reads the box
    seed_from_link(st.session_state.get("page", "explorer"))
    mine = current_text(DEFAULT)[0]
    st.session_state["cfg_from_text"] = None if mine is None else mine.cfg
    st.session_state["after"] = text_link_values("explorer")
    st.session_state["elsewhere"] = text_link_values("quiz")


def test_a_link_s_text_fills_the_box_and_a_short_text_goes_back_into_the_link():
    at = AppTest.from_function(script, default_timeout=60)
    at.query_params.update({"text": "the cat sat on the mat", "tokens": "char"})
    at.run()
    assert not at.exception
    assert at.session_state["before"] == {"text": "the cat sat on the mat", "tokens": "char"}
    assert at.session_state["yt_text"] == "the cat sat on the mat" and at.session_state["yt_level"] == "characters"
    assert at.session_state["cfg_from_text"].M == 22
    assert at.session_state["after"] == {"text": "the cat sat on the mat", "tokens": "char"}
    assert at.session_state["elsewhere"] == {}


def test_a_text_over_200_characters_stays_out_of_the_link():
    at = AppTest.from_function(script, default_timeout=60)
    at.query_params.update({"text": "x" * 201})
    at.run()
    assert at.session_state["yt_text"] == "x" * 201
    assert at.session_state["after"] == {}


def test_the_quiz_reads_the_text_in_the_box_and_the_sizes_it_sets():
    at = make_app().run()
    at.switch_page("pages/quiz.py").run()
    assert at.session_state["sidebar_run"].tokens is None
    at.session_state["yt_text"] = "the cat sat on the mat"
    at.run()
    run = at.session_state["sidebar_run"]
    assert (run.cfg.N, run.cfg.M, run.cfg.vocab_size) == (1, 11, 7) and run.tokens.source[0][2] == "cat"


def test_a_link_to_a_page_without_the_box_leaves_its_text_out_as_its_warning_says():
    at = AppTest.from_function(script, default_timeout=60)
    at.session_state["page"] = "cost"
    at.query_params.update({"text": "the cat sat on the mat", "tokens": "word"})
    at.run()
    assert not at.exception
    assert "yt_text" not in at.session_state and "yt_level" not in at.session_state
    assert at.session_state["cfg_from_text"] is None
