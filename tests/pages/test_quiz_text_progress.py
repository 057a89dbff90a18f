"""Answers on the learner's own text, carried to a new session: restored from the browser's copy and imported
from a file, they are marked again on that text, not on the example (the browser's side is played by setting
its report)."""

import json

from quizzes import BY_ID
from tests.support.apptest import answer, browser_reports, make_app, score_line, stored_copy

MY_TEXT = "one two\nthree"  # its first line: 3 word tokens, vocab_size 4; the example's: 11 and 7


def quiz_on_text_topic(at, qid: str) -> None:
    """The quiz on the "Your text" topic, stepped with Next to the answer box of one question."""
    at.selectbox(key="quiz_topic").set_value(BY_ID[qid].topic).run()
    for _ in range(20):
        if f"ans_{qid}" in [t.key for t in at.text_input]:
            return
        at.button(key="quiz_next").click().run()
    raise AssertionError(f"{qid} is not on the page")


def answered_on_my_text() -> str:
    """The browser's copy after one answer right on MY_TEXT (typed in the Explorer's box) and one wrong there,
    though right on the example."""
    at = make_app().run()
    at.text_area(key="yt_text").input(MY_TEXT).run()
    at.switch_page("pages/quiz.py").run()
    browser_reports(at, "")
    quiz_on_text_topic(at, "yt-count-word")
    answer(at, "yt-count-word", "3")
    quiz_on_text_topic(at, "yt-vocab-word")
    answer(at, "yt-vocab-word", "7")
    assert "**1 right**, **1 wrong**" in score_line(at)
    saved = stored_copy(at)
    assert json.loads(saved)["answers"]["yt-count-word"]["text"] == {"text": MY_TEXT, "tokens": "word"}
    return saved


def marks(at) -> dict[str, tuple[bool, str]]:
    return {qid: (e["correct"], e["expected"]) for qid, e in at.session_state["quiz_progress"]["answers"].items()}


def new_quiz_session():
    """The next day: a new session, with the box empty."""
    at = make_app().run()
    at.switch_page("pages/quiz.py").run()
    assert not at.exception
    return at


def test_answers_on_your_text_come_back_as_they_were_marked():
    saved = answered_on_my_text()

    later = new_quiz_session()
    browser_reports(later, saved)
    assert "**1 right**, **1 wrong**" in score_line(later)
    assert [s.value for s in later.success] == ["Welcome back: 2 answers restored from this browser."]
    assert marks(later) == {"yt-count-word": (True, "3"), "yt-vocab-word": (False, "4")}

    imported = new_quiz_session()
    imported.text_area(key="quiz_paste").input(saved).run()
    imported.button(key="quiz_paste_load").click().run()
    assert not imported.exception
    assert [s.value for s in imported.success] == [
        "Imported 2 answers. Each answer was checked again against the model at the config it was answered with."]
    assert "**1 right**, **1 wrong**" in score_line(imported)
    assert marks(imported) == {"yt-count-word": (True, "3"), "yt-vocab-word": (False, "4")}


def test_an_answer_given_at_a_texts_sizes_off_the_sliders_steps_comes_back_at_those_sizes():
    """With a text in the box every question asks about the sizes the text sets: 33 words are M = 65 tokens,
    between the M slider's steps 64 and 96. The answer is marked again at M = 65, not at the default config."""
    words = " ".join(f"w{i}" for i in range(33))  # 33 words and 32 spaces: 65 tokens, vocab_size 35
    at = make_app().run()
    at.text_area(key="yt_text").input(words).run()
    at.switch_page("pages/quiz.py").run()
    browser_reports(at, "")
    at.selectbox(key="quiz_topic").set_value(BY_ID["shape-tokens"].topic).run()
    answer(at, "shape-tokens", "(1, 65)")
    assert "**1 right**" in score_line(at)
    saved = stored_copy(at)
    assert json.loads(saved)["answers"]["shape-tokens"]["config"]["M"] == 65

    later = new_quiz_session()
    browser_reports(later, saved)
    assert marks(later) == {"shape-tokens": (True, "(1, 65)")}
    assert [s.value for s in later.success] == ["Welcome back: 1 answer restored from this browser."]
