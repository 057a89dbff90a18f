"""One failing part never takes a page down: it shows a short error, and the session keeps its work."""

import streamlit as st

import quizzes.experiments
from tests.support.apptest import explorer_opened, make_app, running


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

    def broken(name, cfg, shapes=None):  # quizzes.experiments.run's signature
        raise RuntimeError(f"injected failure in {name}")

    monkeypatch.setattr(quizzes.experiments, "run", broken)
    st.cache_data.clear()
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("experiment failed: injected failure" in e for e in errors), errors
    assert next(m.value for m in at.markdown if m.value.startswith("Score:")) == score_before
    assert any(e.label == "Save or restore progress" for e in at.expander)  # the page went on past it


def test_checking_an_answer_whose_experiment_fails_says_so_and_records_nothing(monkeypatch):
    """The answer to dk-params-nhead is measured by the head_options experiment. With that experiment
    failing, Check says the expected answer could not be computed; it neither raises nor marks the
    learner wrong."""
    def broken(name, cfg, shapes=None):  # quizzes.experiments.run's signature
        raise RuntimeError(f"injected failure in {name}")

    at = make_app({"q": "dk-params-nhead"})
    at.switch_page("pages/quiz.py").run()
    assert not at.exception
    monkeypatch.setattr(quizzes.experiments, "run", broken)
    st.cache_data.clear()
    at.run()  # ui.quiz.state looks quizzes.experiments.run up at each call, so the patch is what Check runs
    assert not at.exception
    answer = at.radio(key="ans_dk-params-nhead")
    answer.set_value(answer.options[0])
    at.button(key="submit_dk-params-nhead").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("Could not compute the expected answer: injected failure in head_options" in e for e in errors), errors
    assert "**0 right**, **0 wrong**" in next(m.value for m in at.markdown if m.value.startswith("Score:"))


def test_a_failing_chart_leaves_the_rest_of_the_explorer(monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("injected chart failure")

    monkeypatch.setattr(st, "vega_lite_chart", broken)
    for tab in ("Parameters", "Memory against M"):  # the page draws the open tab only
        at = explorer_opened(make_app(), tab=tab)
        assert not at.exception
        errors = [e.value for e in at.error]
        assert sum("injected chart failure" in e for e in errors) == 1, tab
        assert at.dataframe  # the table still rendered
        assert running(at).N == 2
