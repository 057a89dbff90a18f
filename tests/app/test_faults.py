"""One failing part never takes a page down: it shows a short error, and the session keeps its work."""

import streamlit as st

import core.experiments
from tests.app.conftest import make_app


def quiz_app():
    at = make_app().run()
    at.switch_page("pages/quiz.py").run()
    assert not at.exception
    return at


def first_question_id(at) -> str:
    return next(b.key for b in at.button if b.key and b.key.startswith("submit_")).removeprefix("submit_")


def test_a_failing_experiment_shows_an_error_and_keeps_the_score(monkeypatch):
    at = quiz_app()
    qid = first_question_id(at)
    # Answer the first question (whatever it is) so there is progress to keep.
    answer = at.text_input(key=f"ans_{qid}") if any(w.key == f"ans_{qid}" for w in at.text_input) \
        else at.radio(key=f"ans_{qid}")
    if hasattr(answer, "options"):
        answer.set_value(answer.options[0])
    else:
        answer.input("(1, 2, 3)")
    at.button(key=f"submit_{qid}").click().run()
    assert not at.exception
    score_before = next(m.value for m in at.markdown if m.value.startswith("Score:"))
    assert "0 right**, **0 wrong" not in score_before

    def broken(name, cfg, shapes=None):  # core.experiments.run's signature
        raise RuntimeError(f"injected failure in {name}")

    monkeypatch.setattr(core.experiments, "run", broken)
    st.cache_data.clear()
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("experiment failed: injected failure" in e for e in errors), errors
    assert next(m.value for m in at.markdown if m.value.startswith("Score:")) == score_before
    assert any(e.label == "Save or restore progress" for e in at.expander)  # the page went on past it
    # Submitting while the experiment is broken gives a message, not a traceback.
    st.cache_data.clear()
    at.button(key=f"submit_{qid}").click().run()
    assert not at.exception


def test_a_failing_chart_leaves_the_rest_of_the_explorer(monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("injected chart failure")

    monkeypatch.setattr(st, "vega_lite_chart", broken)
    at = make_app().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert sum("injected chart failure" in e for e in errors) == 2  # parameters and memory tabs
    assert at.dataframe  # the table still rendered
    assert at.session_state["cfg"].N == 2
