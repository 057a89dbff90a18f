"""The quiz page in AppTest: a right and a wrong answer in the score, imports, review, reset, and the
copy of the progress the browser keeps (the browser's side is played by setting its report)."""

import json
import random
import re

import pytest

from core import DEFAULT, TransformerConfig
from core.config import TINY_BERT, TINY_LLAMA
from quizzes import BY_ID, QUESTIONS, Context, Question, format_answer, questions_for
from quizzes.experiments import EXPERIMENTS
from quizzes.progress import FORMAT
from render.tables import title_lines
from tests.support.apptest import (answer, answered, architecture_opened, browser_reports, make_app, open_page,
                                   running, score_line, stored_copy)
from tests.support.links import config_link

ASKED = len(questions_for(None, DEFAULT))  # the questions about the default model, the paper's


def quiz_app():
    at = make_app().run()
    at.switch_page("pages/quiz.py").run()
    assert not at.exception
    return at


def step_to(at, topic: str, qid: str) -> None:
    """The quiz on one topic, stepped with Next to the answer box of one question."""
    at.selectbox(key="quiz_topic").set_value(topic).run()
    for _ in QUESTIONS:
        if f"ans_{qid}" in [t.key for t in at.text_input]:
            return
        at.button(key="quiz_next").click().run()
    raise AssertionError(f"{qid} is not in {topic}")


def answer_dk_value(at, text: str) -> None:
    """Open the d_k topic and answer its first question, dk-value (d_k = 8 at the default config)."""
    at.selectbox(key="quiz_topic").set_value("The choice of d_k").run()
    answer(at, "dk-value", text)


def answer_first_masking(at) -> str:
    """Answer the Masking topic's first question (with its first choice); its id."""
    at.selectbox(key="quiz_topic").set_value("Masking").run()
    qid = next(r.key for r in at.radio if r.key.startswith("ans_"))[4:]
    at.radio(key=f"ans_{qid}").set_value(BY_ID[qid].choices[0]).run()
    at.button(key=f"submit_{qid}").click().run()
    return qid


def reset_progress(at) -> None:
    """Reset progress, then the page's question: yes, forget my answers."""
    at.button(key="quiz_ask_reset").click().run()
    at.button(key="quiz_reset").click().run()


def test_right_and_wrong_answers_show_in_the_score():
    at = quiz_app()
    assert "0 right" in score_line(at)
    at.selectbox(key="quiz_topic").set_value("The choice of d_k").run()
    expected = BY_ID["dk-value"].expected(Context(DEFAULT))
    answer(at, "dk-value", format_answer(BY_ID["dk-value"], expected))
    assert any("Right" in s.value for s in at.success)
    assert any(f"`{expected}`" in m.value for m in at.markdown)
    assert any("Live evidence" in m.value for m in at.markdown)
    at.button(key="quiz_next").click().run()
    wrong = BY_ID["dk-count"].expected(Context(DEFAULT)) + 1
    answer(at, "dk-count", str(wrong))
    assert any("Not quite" in e.value for e in at.error)
    line = score_line(at)
    assert "**1 right**" in line and "**1 wrong**" in line
    progress = at.session_state["quiz_progress"]["answers"]
    assert progress["dk-value"]["correct"] is True and progress["dk-count"]["correct"] is False
    assert not at.exception

    # Review shows only the missed question; reset clears everything.
    at.toggle(key="quiz_review").set_value(True).run()
    assert any("Question 1 of 1" in m.value for m in at.markdown)
    assert at.text_input(key="ans_dk-count") is not None
    reset_progress(at)
    assert "**0 right**" in score_line(at) and not at.session_state["quiz_progress"]["answers"]


def counter(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("Question "))


def test_a_new_list_of_questions_starts_at_its_first_unless_it_holds_the_current_one():
    """Review opened on "Question 2 of 2": the position carried over from the longer list. A new
    list (review, topic) starts at its first question, or stays on the one shown when it is in the
    new list too; a new shuffle starts at its first."""
    at = quiz_app()
    answer_dk_value(at, "5")  # wrong (d_k = 8), as is the third question's answer
    at.button(key="quiz_next").click().run()
    at.button(key="quiz_next").click().run()
    answer(at, "dk-refused", "12345")
    at.button(key="quiz_prev").click().run()  # on Question 2, which was not missed
    assert counter(at) == "Question 2 of 10"
    at.toggle(key="quiz_review").set_value(True).run()
    assert counter(at) == "Question 1 of 2" and at.text_input(key="ans_dk-value") is not None
    at.button(key="quiz_next").click().run()  # dk-refused, missed: in both lists
    at.toggle(key="quiz_review").set_value(False).run()
    assert counter(at) == "Question 3 of 10" and at.text_input(key="ans_dk-refused") is not None
    at.toggle(key="quiz_review").set_value(True).run()
    assert counter(at) == "Question 2 of 2"
    at.selectbox(key="quiz_topic").set_value("All topics").run()  # still missed there: stays on it
    assert at.text_input(key="ans_dk-refused") is not None
    at.selectbox(key="quiz_topic").set_value("The choice of d_k").run()
    at.toggle(key="quiz_review").set_value(False).run()
    at.number_input(key="quiz_seed").set_value(7).run()  # a new order, from its top
    shuffled = list(questions_for("The choice of d_k"))
    random.Random(7).shuffle(shuffled)
    assert counter(at) == "Question 1 of 10" and any(m.value == shuffled[0].text(Context(DEFAULT))
                                                     for m in at.markdown)
    at.selectbox(key="quiz_topic").set_value("Masking").run()  # not in it: its first question
    assert counter(at) == "Question 1 of 7"


def test_a_question_answered_right_in_review_stays_to_say_so_until_the_review_ends():
    """It left the review list at once, and its "Right." with it: the learner never saw it."""
    at = quiz_app()
    answer_dk_value(at, "5")
    at.button(key="quiz_next").click().run()
    answer(at, "dk-count", "12345")
    at.toggle(key="quiz_review").set_value(True).run()
    assert counter(at) == "Question 2 of 2"  # dk-count, where the learner was
    at.button(key="quiz_prev").click().run()
    answer(at, "dk-value", "8")  # right now: it stays, and says so
    assert counter(at) == "Question 1 of 2" and [s.value for s in at.success] == ["Right. You answered `8`"]
    at.button(key="quiz_next").click().run()
    assert at.text_input(key="ans_dk-count") is not None
    at.toggle(key="quiz_review").set_value(False).run()
    at.toggle(key="quiz_review").set_value(True).run()  # a new review: only what is still missed
    assert counter(at) == "Question 1 of 1" and at.text_input(key="ans_dk-count") is not None


def test_a_question_keeps_its_number_in_a_review():
    """Q3 answered wrong came back in the review as "Q2 · Shapes", and Q2 there was not the Q2 outside."""
    at = quiz_app()
    at.selectbox(key="quiz_topic").set_value("Shapes").run()
    answer(at, "shape-tokens", "(N, M, E)")  # Q1, wrong
    at.button(key="quiz_next").click().run()
    at.button(key="quiz_next").click().run()
    answer(at, "shape-memory", "(N, M_target, E)")  # Q3, wrong
    at.toggle(key="quiz_review").set_value(True).run()
    assert counter(at) == "Question 2 of 2"  # the review's own count
    assert [h.value for h in at.main.header] == ["Q3 · Shapes"]
    assert at.text_input(key="ans_shape-memory").label == "Your answer to Q3"
    at.radio(key="quiz_mode").set_value("A topic set").run()
    assert [h.value for h in at.main.header] == ["Q1 · Shapes", "Q3 · Shapes"]


def test_the_mode_and_the_review_say_what_they_do():
    at = quiz_app()
    assert at.radio(key="quiz_mode").help.startswith(
        f"A topic set shows every question of the chosen topic on one page (with All topics, all {ASKED} that apply "
        "to this model)")
    assert at.toggle(key="quiz_review").help.startswith("Only the questions whose latest answer was wrong.")


def test_a_shape_with_an_axis_too_few_is_told_so():
    at = quiz_app()
    step_to(at, "Q, K and V dimensions", "qkv-scores")
    answer(at, "qkv-scores", "(2, 2, 8)")
    assert any("Not quite" in e.value for e in at.error)
    assert "Your shape has 3 axes and the expected one has 4" in " ".join(c.value for c in at.caption)
    answer(at, "qkv-scores", "(8,)")
    assert "Your shape has 1 axis and the expected one has 4" in " ".join(c.value for c in at.caption)
    answer(at, "qkv-scores", "(N, M, M, nhead)")  # four axes, in the wrong order: no word on axes
    assert not any("axes" in c.value for c in at.caption)


def blocks(node):
    """Every element and block under ``node``, depth first."""
    for child in getattr(node, "children", {}).values():
        yield child
        yield from blocks(child)


def keyed_row(at, key: str):
    """The page's horizontal container with this key."""
    [row] = [b for b in blocks(at.main) if b.type == "flex_container" and b.proto.id.endswith(f"-{key}")]
    return row


def test_previous_and_next_sit_at_the_row_ends_with_the_count_between():
    """In columns, Next stopped a quarter of the row short of the right edge and the count sat off
    centre; on a phone the three stacked. One row, spread edge to edge, centred vertically."""
    at = quiz_app()
    row = keyed_row(at, "quiz_nav")
    flex = row.proto.flex_container
    assert (flex.direction, flex.justify, flex.align) == (
        flex.HORIZONTAL, flex.SPACE_BETWEEN, flex.ALIGN_CENTER)
    assert not flex.wrap  # a wrapping row put Next alone under Previous on a 360 px phone
    kinds = [(child.type, getattr(child, "key", None) or child.value) for child in row.children.values()]
    assert kinds == [("button", "quiz_prev"), ("markdown", f"Question 1 of {ASKED}"), ("button", "quiz_next")]


def went_round(at) -> list[str]:
    return [c.value for c in at.caption if "went round" in c.value]


def test_previous_and_next_say_when_they_go_round_the_end_of_the_list():
    """Previous on Q1 led to the last question, and Next on it to the first, without a word."""
    at = quiz_app()
    at.selectbox(key="quiz_topic").set_value("Masking").run()
    assert counter(at) == "Question 1 of 7" and not went_round(at)
    at.button(key="quiz_prev").click().run()
    assert counter(at) == "Question 7 of 7"
    assert went_round(at) == ["That was the first question: Previous went round to the last."]
    qid = next(w.key for w in [*at.radio, *at.text_input] if w.key.startswith("ans_"))[4:]
    if BY_ID[qid].kind in ("shape", "numeric"):
        answer(at, qid, "0")
    else:
        at.radio(key=f"ans_{qid}").set_value(BY_ID[qid].choices[0]).run()
        at.button(key=f"submit_{qid}").click().run()
    assert not went_round(at)  # a Check is the learner's next action: the note has been read
    at.button(key="quiz_next_below").click().run()  # the Next under the evidence goes round too
    assert counter(at) == "Question 1 of 7"
    assert went_round(at) == ["That was the last question: Next went round to the first."]
    at.button(key="quiz_next").click().run()
    assert counter(at) == "Question 2 of 7" and not went_round(at)
    at.button(key="quiz_prev").click().run()
    at.button(key="quiz_prev").click().run()
    assert went_round(at) == ["That was the first question: Previous went round to the last."]
    at.button(key="quiz_next").click().run()
    assert counter(at) == "Question 1 of 7"
    assert went_round(at) == ["That was the last question: Next went round to the first."]


def test_shape_answer_in_another_written_form():
    at = quiz_app()
    at.selectbox(key="quiz_topic").set_value("Shapes").run()
    dims = BY_ID["shape-tokens"].expected(Context(DEFAULT))
    answer(at, "shape-tokens", "×".join(map(str, dims)))
    assert "**1 right**" in score_line(at)
    answer(at, "shape-tokens", f"torch.Size([{', '.join(map(str, dims))}])")  # letters, yet plain numbers
    assert "**1 right**" in score_line(at)
    assert not any(c.value.startswith("Symbols are checked") for c in at.caption)


def test_a_shape_in_symbols_is_read_and_an_unreadable_reply_keeps_the_last_attempt():
    at = quiz_app()
    at.selectbox(key="quiz_topic").set_value("Shapes").run()
    answer(at, "shape-tokens", "(N, M)")
    assert "**1 right**" in score_line(at)
    assert "Expected, for the config you answered with: `(2, 8)`, that is `(N, M)`" in [m.value for m in at.markdown]
    answer(at, "shape-tokens", "(batch, length)")  # not a shape: said so, not marked wrong
    assert [w.value for w in at.warning] == [
        "Could not read that as a shape. Write its sizes as numbers, e.g. `(2, 8, 16)` or `2 x 8 x 16`, or in the "
        "config's symbols, e.g. `(N, M, E)`, `N x M x E` or `(N, nhead, M, E/nhead)`. Your last checked answer is "
        "kept below."]
    assert "**1 right**" in score_line(at) and "wrong" not in score_line(at).replace("0 wrong", "")
    assert at.session_state["quiz_progress"]["answers"]["shape-tokens"]["given"] == "(N, M)"


def test_a_long_paste_reaches_the_page_and_is_told_how_long_it_is():
    """With max_chars=200, Streamlit's box dropped a longer paste whole, saying nothing: the box has no
    limit now, and a reply longer than the parsers read is told so, with the draft kept to shorten."""
    at = quiz_app()
    at.selectbox(key="quiz_topic").set_value("Shapes").run()
    assert not at.text_input(key="ans_shape-tokens").proto.max_chars
    pasted = "(N, M)" + " " * 300
    answer(at, "shape-tokens", pasted)
    assert [w.value for w in at.warning] == [
        "That answer is 306 characters long, and an answer is read only up to 200: a shape or a number fits in "
        "far fewer. It is still in the box to shorten."]
    assert at.text_input(key="ans_shape-tokens").value == pasted and "**0 right**" in score_line(at)
    answer(at, "shape-tokens", "(N, M)")
    assert not at.warning and "**1 right**" in score_line(at)

def test_an_answered_question_has_a_next_under_its_evidence():
    """The evidence of an answered question runs a screen or two; the only Next sat above the question."""
    at = quiz_app()
    assert "quiz_next_below" not in [b.key for b in at.button]  # nothing to scroll past yet
    at.radio(key="ans_rnn-recurrence").set_value(BY_ID["rnn-recurrence"].choices[0]).run()
    at.button(key="submit_rnn-recurrence").click().run()
    assert any("Live evidence" in m.value for m in at.markdown)
    at.button(key="quiz_next_below").click().run()
    assert not at.exception
    assert f"Question 2 of {ASKED}" in [m.value for m in at.markdown]
    assert "ans_rnn-steps" in [t.key for t in at.text_input]


def test_choice_question_in_a_topic_set():
    at = quiz_app()
    at.radio(key="quiz_mode").set_value("A topic set").run()
    at.selectbox(key="quiz_topic").set_value("Masking").run()
    assert not at.exception
    q = BY_ID["mask-probe"]
    at.radio(key="ans_mask-probe").set_value(q.expected(Context(DEFAULT))).run()
    at.button(key="submit_mask-probe").click().run()
    assert not at.exception and "**1 right**" in score_line(at)


def test_garbage_import_keeps_progress():
    at = quiz_app()
    answer_dk_value(at, "999")
    before = dict(at.session_state["quiz_progress"])
    for garbage in ("{not json", "[1, 2, 3]", json.dumps({"format": FORMAT, "version": 1, "answers": 5})):
        at.text_area(key="quiz_paste").input(garbage).run()
        at.button(key="quiz_paste_load").click().run()
        assert not at.exception
        assert any("Import refused" in e.value and "kept" in e.value for e in at.error)
        assert at.session_state["quiz_progress"] == before


def test_good_import_replaces_progress():
    at = quiz_app()
    doc = {"format": FORMAT, "version": 1,
           "answers": {"dk-value": {"correct": True, "given": "8", "expected": "8"},
                       "mask-which": {"correct": False, "given": "b", "expected": "a"}}}
    at.text_area(key="quiz_paste").input(json.dumps(doc)).run()
    at.button(key="quiz_paste_load").click().run()
    assert any("Imported 2" in s.value for s in at.success)
    assert "**1 right**" in score_line(at) and "**1 wrong**" in score_line(at)


def test_an_import_is_marked_again_not_taken_at_its_word(monkeypatch):
    """An exported file with "correct": true typed in showed "Right." beside a wrong answer, and
    counted it. The import marks every answer again, at the config it names if the sliders can show
    it (the default one otherwise), and says what changed."""
    at = quiz_app()
    off_sliders = DEFAULT.replace(E=100, nhead=4)  # a valid config, but 100 is not one of E's steps
    doc = {"format": FORMAT, "version": 1, "answers": {
        "dk-value": {"correct": True, "given": "5", "expected": "5", "config": DEFAULT.to_dict()},
        "dk-count": {"correct": True, "given": "8", "expected": "8", "config": off_sliders.to_dict()}}}
    at.text_area(key="quiz_paste").input(json.dumps(doc)).run()
    at.button(key="quiz_paste_load").click().run()
    assert not at.exception
    assert [s.value for s in at.success] == [
        "Imported 2 answers. Each answer was checked again against the model at the config it was answered with: "
        "2 that the file marked right are wrong, and are marked so here. One of them names no config the sliders "
        "can show, so it was checked at the default config."]
    assert "**0 right**, **2 wrong**" in score_line(at)
    at.selectbox(key="quiz_topic").set_value("The choice of d_k").run()
    assert [e.value for e in at.error] == ["Not quite. You answered `5`"]
    assert any(m.value.startswith("Expected, for the config you answered with: `8`") for m in at.markdown)
    answers = at.session_state["quiz_progress"]["answers"]
    assert answers["dk-count"]["config"] == DEFAULT.to_dict()  # recorded where it was checked

    # When no answer can be marked, the import is refused and the progress kept.
    before = at.session_state["quiz_progress"]

    def fails(self, ctx):
        raise RuntimeError("an experiment failed")

    monkeypatch.setattr(Question, "expected", fails)
    at.button(key="quiz_paste_load").click().run()
    assert not at.exception and at.session_state["quiz_progress"] == before
    assert [e.value for e in at.error if "Import" in e.value] == [
        "Import refused, your current progress is kept. None of the file's 2 answers could be checked against "
        "the model."]
    one = {**doc, "answers": {"dk-value": doc["answers"]["dk-value"]}}
    at.text_area(key="quiz_paste").input(json.dumps(one)).run()
    at.button(key="quiz_paste_load").click().run()
    assert not at.exception and at.session_state["quiz_progress"] == before
    assert [e.value for e in at.error if "Import" in e.value] == [
        "Import refused, your current progress is kept. The file's one answer could not be checked against the "
        "model."]


def test_an_import_is_answered_inside_its_expander_which_stays_open():
    """A refused import left "Save or restore progress" open and one that took closed it. Both keep
    it open now, with the result under the button, where the learner is looking."""
    at = quiz_app()

    def io():
        [expander] = [e for e in at.expander if e.label == "Save or restore progress"]
        return expander

    assert at.session_state["quiz_io"] is False  # closed until opened
    for text, kind, words in (("{not json", "error", "Import refused"),
                              (json.dumps({"format": FORMAT, "version": 1, "answers": {}}), "success", "Imported 0")):
        at.text_area(key="quiz_paste").input(text).run()
        at.button(key="quiz_paste_load").click().run()
        assert at.session_state["quiz_io"] is True and io().proto.expanded
        assert [m.value for m in getattr(io(), kind)] == [m.value for m in getattr(at, kind)]
        assert words in getattr(io(), kind)[0].value
    at.button(key="quiz_next").click().run()  # the learner moves on: the note goes, the expander stays open
    assert not io().success and at.session_state["quiz_io"] is True


def test_shuffle_seed_is_reproducible():
    ctx = Context(DEFAULT)
    order = list(QUESTIONS)
    random.Random(7).shuffle(order)  # the whole bank's shuffle; the paper's model is asked its own questions of it
    mine = [q for q in order if q.applies(DEFAULT)]
    for seed, first in ((7, mine[0]), (0, QUESTIONS[0])):
        at = quiz_app()
        at.number_input(key="quiz_seed").set_value(seed).run()
        assert any(m.value == first.text(ctx) for m in at.markdown), (seed, first.id)


@pytest.mark.parametrize("cfg", [DEFAULT, TINY_LLAMA, TINY_BERT], ids=["paper", "Llama-like", "BERT-like"])
def test_every_experiment_renders_its_evidence(cfg):
    """Import one answer per experiment, show all topics: each evidence block draws without a guard error, for
    the questions each family is asked."""
    per_experiment = {}
    for q in questions_for(None, cfg):
        per_experiment.setdefault(q.evidence, q.id)
    doc = {"format": FORMAT, "version": 1,
           "answers": {qid: {"correct": False, "given": "?", "expected": "x", "config": cfg.to_dict()}
                       for qid in per_experiment.values()}}
    at = open_page("quiz", config_link(cfg))
    assert not at.exception
    at.text_area(key="quiz_paste").input(json.dumps(doc)).run()
    at.button(key="quiz_paste_load").click().run()
    at.radio(key="quiz_mode").set_value("A topic set").run()
    assert not at.exception
    assert not [e.value for e in at.error if "failed" in e.value]
    titles = [m.value for m in at.markdown if m.value.startswith("**Live evidence")]
    assert len(titles) == len(per_experiment)
    charts = at.get("vega_lite_chart")
    tables = [name for name in per_experiment if EXPERIMENTS[name](cfg).chart.get("kind") == "table"]
    assert set(tables) <= {"attention_shapes", "pass_shapes", "shift_right"}  # these show a table instead of a chart
    assert len(charts) >= len(per_experiment) - len(tables)


def test_a_formula_that_depends_on_the_config_is_shown_for_the_config_answered_with():
    """A learned table's parameters are max_len*E, sinusoids' none. After a switch back to sinusoids,
    the attempt at the learned table still shows its own formula; a formula that is just a number
    is not repeated beside the answer; and a switch of tie_embeddings is listed too."""
    at = architecture_opened(quiz_app()).run()
    at.sidebar.radio(key="w_positional").set_value("learned").run()
    step_to(at, "Positional encoding", "pos-params")
    answer(at, "pos-params", "E*max_len")  # 16 x 8 = 128 at the default config
    assert "**1 right**" in score_line(at)
    assert "Expected, for the config you answered with: `128`, that is `max_len*E`" in [m.value for m in at.markdown]
    at.sidebar.radio(key="w_positional").set_value("sinusoidal").run()
    at.sidebar.checkbox(key="w_tie_embeddings").check().run()
    assert not at.exception
    assert "Expected, for the config you answered with: `128`, that is `max_len*E`" in [m.value for m in at.markdown]
    assert any("positional=learned, tie_embeddings=False" in c.value for c in at.caption)
    answer(at, "pos-params", "0")
    assert "Expected, for the config you answered with: `0`" in [m.value for m in at.markdown]


def test_changed_config_is_flagged_after_answering():
    at = quiz_app()
    answer_dk_value(at, "8")
    at.sidebar.select_slider(key="w_E").set_value(24).run()
    assert not at.exception
    assert any("You answered with E=16" in c.value for c in at.caption)
    answer(at, "dk-value", "12")  # E=24, nhead=2: d_k is now 12
    assert "**1 right**" in score_line(at) and "**0 wrong**" in score_line(at)


def test_drafts_and_settings_outlast_other_pages_and_reset_clears_every_draft():
    """Half-typed answers and the quiz's settings stay while the learner looks at another question
    or another page; Reset progress empties every answer box, drawn or not."""
    at = quiz_app()
    at.selectbox(key="quiz_topic").set_value("The choice of d_k").run()
    at.text_input(key="ans_dk-value").input("first draft").run()
    at.button(key="quiz_next").click().run()  # dk-value's box is no longer drawn
    at.text_input(key="ans_dk-count").input("second draft").run()
    at.switch_page("pages/explorer.py").run()
    at.switch_page("pages/quiz.py").run()
    assert at.selectbox(key="quiz_topic").value == "The choice of d_k"
    assert at.text_input(key="ans_dk-count").value == "second draft"
    at.button(key="quiz_prev").click().run()
    assert at.text_input(key="ans_dk-value").value == "first draft"

    reset_progress(at)  # back at the topic's first question, dk-value
    assert at.text_input(key="ans_dk-value").value == ""
    at.button(key="quiz_next").click().run()
    assert at.text_input(key="ans_dk-count").value == ""
    assert not at.exception


def test_progress_kept_by_the_browser_comes_back_in_a_new_session():
    at = quiz_app()
    assert stored_copy(at) is None  # nothing is written before the browser has said what it holds
    browser_reports(at, "")
    assert json.loads(stored_copy(at))["answers"] == {}
    answer_dk_value(at, "999")
    saved = stored_copy(at)
    assert json.loads(saved)["answers"]["dk-value"]["correct"] is False

    later = quiz_app()  # a new tab, or the same tab after a server restart
    assert "**0 wrong**" in score_line(later) and stored_copy(later) is None
    browser_reports(later, saved)
    assert "**1 wrong**" in score_line(later)
    assert any("Welcome back: 1 answer restored" in s.value for s in later.success)
    assert json.loads(stored_copy(later)) == json.loads(saved)
    reset_progress(later)
    assert json.loads(stored_copy(later))["answers"] == {}  # Reset forgets the browser's copy too


def test_progress_restored_from_the_browser_is_marked_again():
    """The browser's copy was taken at its word: a wrong answer marked right in it (by a checker since fixed,
    or by a hand in the browser's storage) came back right and counted. It is marked again against the model
    now, as an imported file is, and the note says what changed; an answer unchanged adds no words."""
    at = quiz_app()
    browser_reports(at, "")
    answer_dk_value(at, "999")
    saved = json.loads(stored_copy(at))
    saved["answers"]["dk-value"]["correct"] = True  # d_k is 8 at the default config, not 999

    later = quiz_app()
    browser_reports(later, json.dumps(saved))
    assert "**1 wrong**" in score_line(later) and "**0 right**" in score_line(later)
    assert any("Welcome back: 1 answer restored from this browser. Checked again against the model: 1 that this "
               "browser marked right is wrong, and is marked so here." in s.value for s in later.success)
    assert json.loads(stored_copy(later))["answers"]["dk-value"]["correct"] is False


def test_an_answer_that_cannot_be_checked_again_is_kept_as_the_browser_had_it(monkeypatch):
    """Marking the browser's copy again must not lose work: an answer whose check fails is kept as it was."""
    import quizzes.recheck

    at = quiz_app()
    browser_reports(at, "")
    answer_dk_value(at, "8")
    saved = stored_copy(at)

    def broken(*args, **kwargs):
        raise RuntimeError("an experiment failed")

    monkeypatch.setattr(quizzes.recheck, "mark", broken)
    later = quiz_app()
    browser_reports(later, saved)
    assert "**1 right**" in score_line(later)
    assert any("One answer could not be checked again, and is kept as it was." in s.value for s in later.success)
    assert json.loads(stored_copy(later))["answers"] == json.loads(saved)["answers"]


def test_unreadable_or_blocked_storage_gets_a_message_and_the_quiz_still_works():
    at = quiz_app()
    browser_reports(at, "{not json")
    assert any("could not be read" in w.value for w in at.warning)
    assert at.session_state["quiz_progress"]["answers"] == {}
    assert json.loads(stored_copy(at))["answers"] == {}  # the unreadable copy is replaced at once
    answer_dk_value(at, "999")
    assert "dk-value" in json.loads(stored_copy(at))["answers"]

    blocked = quiz_app()
    assert not any("storage is blocked" in i.value for i in blocked.info)
    browser_reports(blocked, available=False)
    assert any("storage is blocked" in i.value for i in blocked.info)
    answer_dk_value(blocked, "999")
    assert "**1 wrong**" in score_line(blocked)


def test_nothing_more_is_handed_to_a_browser_that_cannot_keep_it():
    """Where storage is blocked (or a write is refused), every run handed the browser a save, which failed and
    reported so, and that report started the next run: in Chromium the page ran four or five times a second
    for as long as it was open, and each run withdrew Reset's question before it could be answered. The
    store now only reads there, so nothing fails and nothing reruns; the quiz and Reset still work."""
    at = quiz_app()
    browser_reports(at, available=False)
    assert stored_copy(at) is None
    answer_dk_value(at, "999")
    assert stored_copy(at) is None and "dk-value" in at.session_state["quiz_progress"]["answers"]
    at.button(key="quiz_ask_reset").click().run()
    assert asks_to_reset(at)
    at.button(key="quiz_reset").click().run()
    assert not at.session_state["quiz_progress"]["answers"] and stored_copy(at) is None

    later = quiz_app()  # storage that reads but refuses a write (a full quota): the first save reports it
    browser_reports(later, "")
    assert stored_copy(later) is not None
    browser_reports(later, available=False)
    assert stored_copy(later) is None and any("storage is blocked" in i.value for i in later.info)
    assert not later.exception


def test_a_refused_write_and_the_read_after_it_leave_resets_question_waiting():
    """A full quota refuses the save of Reset's run; the store, read only from then on, reads the browser's copy
    again and reports it. Both reports start runs the learner did not start: in Chromium the read-back's run
    withdrew the question 1.7 s after it showed. Any new report from the store is the browser's news."""
    at = quiz_app()
    browser_reports(at, "")
    answer_dk_value(at, "5")
    kept = stored_copy(at)
    at.button(key="quiz_ask_reset").click().run()
    assert asks_to_reset(at)
    browser_reports(at, available=False)  # the save of Reset's run is refused
    assert asks_to_reset(at) and stored_copy(at) is None
    browser_reports(at, kept)  # the read-only store reads what the browser still holds
    assert asks_to_reset(at)
    at.run()  # the learner's next action withdraws it, as ever
    assert not asks_to_reset(at) and "dk-value" in at.session_state["quiz_progress"]["answers"]


def test_answers_given_before_the_browser_reports_are_kept_beside_its_copy():
    at = quiz_app()
    answer_dk_value(at, "999")
    older = {"format": FORMAT, "version": 1,
             "answers": {"mask-which": {"correct": True, "given": "a", "expected": "a"},
                         "dk-value": {"correct": True, "given": "8", "expected": "8"}}}  # older: no time
    browser_reports(at, json.dumps(older))
    answers = at.session_state["quiz_progress"]["answers"]
    assert set(answers) == {"dk-value", "mask-which"} and answers["dk-value"]["given"] == "999"
    assert not any("Welcome back" in s.value for s in at.success)
    assert set(json.loads(stored_copy(at))["answers"]) == {"dk-value", "mask-which"}


def other_tab_saved(at, text: str) -> None:
    """Play the browser refusing this tab's last save, because another tab wrote ``text`` since."""
    store = next(el for el in at.get("bidi_component") if el.key == "quiz_store")
    seq = json.loads(store.proto.json)["seq"]
    at.session_state["quiz_store"] = {**at.session_state["quiz_store"], "conflict": {"text": text, "seq": seq}}
    at.run()
    assert not at.exception


def test_two_tabs_keep_each_others_answers_and_a_reset_reaches_both():
    """One browser keeps one copy for every tab of the quiz. A save that would write over another
    tab's is refused by the browser (played here); the page merges and saves both."""
    a, b = quiz_app(), quiz_app()
    browser_reports(a, "")
    browser_reports(b, "")
    answer_dk_value(a, "8")
    b_first = answer_first_masking(b)
    # b saved over the empty copy both tabs had read; a's save is refused: the browser holds b's.
    other_tab_saved(a, stored_copy(b))
    assert set(a.session_state["quiz_progress"]["answers"]) == {"dk-value", b_first}
    assert any("Another quiz tab in this browser saved 1 answer that is now counted here too" in i.value
               for i in a.info)
    assert set(json.loads(stored_copy(a))["answers"]) == {"dk-value", b_first}  # saved again, merged
    a.run()  # the browser's own report follows at once: the note stays until the learner acts, and once only
    assert sum("Another quiz tab" in i.value for i in a.info) == 1  # the same report is not merged twice
    a.button(key=next(b.key for b in a.button if b.key and b.key.startswith("submit_"))).click().run()
    assert not any("Another quiz tab" in i.value for i in a.info)  # gone at the learner's next Check

    reset_progress(b)  # b's save would go over a's merged copy: refused, then merged
    other_tab_saved(b, stored_copy(a))
    assert b.session_state["quiz_progress"]["answers"] == {}  # the reset is later than every answer
    other_tab_saved(a, stored_copy(b))
    assert a.session_state["quiz_progress"]["answers"] == {}  # and it reaches the other tab, which says so
    assert any("reset the progress (or imported a file), which clears the 2 answers given here before it"
               in i.value for i in a.info)


def test_after_a_visit_to_another_page_another_tabs_save_is_still_merged():
    """A visit to another page drops the store's state (Streamlit forgets a widget's state when a run does not
    draw it): back on the quiz, the page found no report from the browser and stopped listening to it, so
    another tab's save was never merged, and every later save of this tab was refused over it. In Chromium
    the answer given after that was kept by neither the browser nor a new tab."""
    a, b = quiz_app(), quiz_app()
    browser_reports(a, "")
    browser_reports(b, "")
    answer_dk_value(a, "8")
    a.switch_page("pages/explorer.py").run()
    a.switch_page("pages/quiz.py").run()
    b_first = answer_first_masking(b)
    a.button(key="quiz_next").click().run()  # a's save would go over b's: refused
    other_tab_saved(a, stored_copy(b))
    assert set(a.session_state["quiz_progress"]["answers"]) == {"dk-value", b_first}
    assert set(json.loads(stored_copy(a))["answers"]) == {"dk-value", b_first}  # merged, and saved again


def test_messages_of_one_run_are_all_shown():
    """A Check that fails and another tab's save can land in one run: both messages are shown, where
    one slot kept only the last."""
    at = quiz_app()
    browser_reports(at, "")
    theirs = {"format": FORMAT, "version": 1,
              "answers": {"mask-which": {"correct": True, "given": "a", "expected": "a", "at": 1}}}
    at.session_state["quiz_flash"] = [("error", "Could not compute the expected answer: played")]
    other_tab_saved(at, json.dumps(theirs))
    assert any("played" in e.value for e in at.error)
    assert any("Another quiz tab in this browser saved 1 answer" in i.value for i in at.info)


def test_parameter_counts_are_bars_down_the_side_on_a_log_axis():
    """Names such as "Llama-2-70B widths: W^Q, W^K, W^V" read whole down the side, and the log axis
    ticks every power of ten, so this config's 20,260 parameters cannot pass for a hundred million."""
    qid = next(q.id for q in QUESTIONS if q.evidence == "parameter_counts")
    doc = {"format": FORMAT, "version": 1, "answers": {qid: {"correct": False, "given": "?", "expected": "x"}}}
    at = quiz_app()
    at.text_area(key="quiz_paste").input(json.dumps(doc)).run()
    at.button(key="quiz_paste_load").click().run()
    at.radio(key="quiz_mode").set_value("A topic set").run()
    at.selectbox(key="quiz_topic").set_value(next(q.topic for q in QUESTIONS if q.id == qid)).run()
    assert not at.exception
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    [bars] = [s for s in specs if s.get("encoding", {}).get("y", {}).get("field") == "what"]
    assert bars["encoding"]["y"]["type"] == "nominal" and bars["encoding"]["y"]["axis"]["labelLimit"] >= 300
    assert bars["encoding"]["x"]["field"] == "parameters" and bars["encoding"]["x"]["scale"]["type"] == "log"
    # A bar on a log axis cannot start at 0 (Vega then draws none): each starts at the power of ten
    # below the smallest count, and the axis ticks every power of ten from there (100 to 1B here).
    assert bars["encoding"]["x2"]["field"] == "start"
    assert bars["encoding"]["x"]["axis"]["values"] == [10 ** k for k in range(2, 10)]


def test_the_permutation_bars_name_their_inputs_whole_down_the_side():
    """Under the bars, at 220 px, the two names were cut to 'no positional enc…' and turned on end."""
    at = quiz_app()
    while "ans_rnn-order" not in [r.key for r in at.radio]:  # a choice question: step_to looks for a box
        at.button(key="quiz_next").click().run()
    at.radio(key="ans_rnn-order").set_value(BY_ID["rnn-order"].choices[0]).run()
    at.button(key="submit_rnn-order").click().run()
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    [bars] = [s for s in specs if s.get("encoding", {}).get("y", {}).get("field") == "input"]
    assert bars["encoding"]["y"]["axis"]["labelLimit"] >= 300
    # A linear axis from 0 with Vega's own labels (no '~s', which writes 0.5 as '500m'), bars from 0.
    assert bars["encoding"]["x"]["field"] == "max |difference|" and "labelExpr" not in bars["encoding"]["x"]["axis"]
    assert "x2" not in bars["encoding"]


def test_the_influence_maps_say_how_to_read_them():
    """The quiz's first evidence: what a row, a column and a white square are, and 'lower' and 'full'."""
    at = quiz_app()
    at.radio(key="ans_rnn-recurrence").set_value(BY_ID["rnn-recurrence"].choices[0]).run()
    at.button(key="submit_rnn-recurrence").click().run()
    assert any(c.value.startswith("How to read the maps: row i is output position i") and "'lower'" in c.value
               for c in at.caption)


def test_an_empty_check_is_answered_under_its_own_button_and_the_feedback_reads_cleanly():
    at = quiz_app()
    at.selectbox(key="quiz_topic").set_value("The choice of d_k").run()
    at.button(key="submit_dk-value").click().run()  # nothing typed yet
    assert [w.value for w in at.warning] == ["Type or pick an answer first."]
    answer(at, "dk-value", "5")  # wrong at the default config (d_k = 8)
    assert [e.value for e in at.error] == ["Not quite. You answered `5`"]  # no stray full stop after the quote
    assert any(m.value.startswith("Expected, for the config you answered with:") for m in at.markdown)
    at.text_input(key="ans_dk-value").input("").run()
    at.button(key="submit_dk-value").click().run()  # emptied, then checked again
    assert [w.value for w in at.warning] == [
        "Type or pick an answer first: the box is empty. The result below is from your last check."]
    assert "**1 wrong**" in score_line(at)  # the empty check changed nothing
    at.run()
    assert not at.warning  # said once, at the click


def test_the_feedback_quotes_the_answer_exactly_as_typed():
    """Quoted plainly, Markdown read the stars of 3*E*(E+1) as italics and echoed '3E(E+1)'. As code,
    every character shows."""
    at = quiz_app()
    step_to(at, "Parameter counts", "params-qkv-bias")
    answer(at, "params-qkv-bias", "3*E*(E+1)")
    assert [s.value for s in at.success] == ["Right. You answered `3*E*(E+1)`"]
    answer(at, "params-qkv-bias", "3*E*E + 3")
    assert [e.value for e in at.error] == ["Not quite. You answered `3*E*E + 3`"]


def test_a_question_that_does_not_change_with_the_config_says_just_expected():
    q = next(q for q in QUESTIONS if not q.parametric and q.kind == "choice")
    at = quiz_app()
    at.selectbox(key="quiz_topic").set_value(q.topic).run()
    for _ in QUESTIONS:  # step to it with Next
        if f"ans_{q.id}" in [r.key for r in at.radio]:
            break
        at.button(key="quiz_next").click().run()
    at.radio(key=f"ans_{q.id}").set_value(q.choices[0]).run()
    at.button(key=f"submit_{q.id}").click().run()
    assert not at.exception
    assert any(m.value.startswith("Expected: ") for m in at.markdown)
    assert not any(m.value.startswith("Expected, for the config") for m in at.markdown)


def test_a_chosen_sentence_is_quoted_in_plain_type_and_as_written():
    """The expected choice, a sentence of up to two lines, was set in code type: grey blocks of monospace.
    A choice in an imported file is anyone's text: its Markdown shows as typed, not as a link."""
    q = BY_ID["rnn-recurrence"]
    at = quiz_app()
    at.radio(key="ans_rnn-recurrence").set_value(q.choices[0]).run()
    at.button(key="submit_rnn-recurrence").click().run()
    expected = next(m.value for m in at.markdown if m.value.startswith("Expected: "))
    assert "`" not in expected
    assert expected.replace("\\", "") == f"Expected: {q.choices[1]}"  # the right choice, its commas escaped
    doc = {"format": FORMAT, "version": 1, "answers": {
        "rnn-recurrence": {"correct": False, "given": "[x](http://example.com)", "expected": "**bold**"}}}
    at.text_area(key="quiz_paste").input(json.dumps(doc)).run()
    at.button(key="quiz_paste_load").click().run()
    assert [e.value for e in at.error] == [r"Not quite. You answered “\[x\]\(http\:\/\/example\.com\)”"]
    # The file's expected answer is not shown: the import marks the answer again, with the model's.
    assert expected in [m.value for m in at.markdown] and not any("bold" in m.value for m in at.markdown)


def as_read(cell: str) -> str:
    """A cell of an st.table as the learner reads it: its Markdown's backslash escapes (render.markdown.as_literal)
    unshown."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", cell)


def records_shown(at):
    """The evidence's tables of records (the pass's tensors, the attention steps, the shift-right steps), each as
    the st.table that drew it and its cells and headers as the learner reads them (as_read)."""
    return [(t, t.value.rename(columns=as_read).map(lambda v: as_read(v) if isinstance(v, str) else v))
            for t in at.table if "measured" not in t.value]


def values_shown(at) -> list[dict[str, str]]:
    """The evidence's tables of values, as {measured: value} per evidence block, as the learner reads them."""
    return [{as_read(k): as_read(v) for k, v in zip(t.value["measured"], t.value["value"])}
            for t in at.table if "measured" in t.value]


def test_evidence_tables_are_tall_enough_for_every_row(monkeypatch):
    """The default height showed ten rows and half of the eleventh: the parameter counts' last values
    hid below it. Every row of a table of values is in view; a table longer than 20 rows scrolls."""
    import streamlit as st

    heights = {}  # the first column's name -> (rows, the height asked for), in every run

    def spy(real, default):
        def drawn(data, *args, **kwargs):
            frame = getattr(data, "data", data)  # a Styler's table
            heights.setdefault(frame.columns[0], []).append((len(frame), kwargs.get("height", default)))
            return real(data, *args, **kwargs)
        return drawn

    # The values and the records are st.tables (as tall as their rows unless told otherwise).
    monkeypatch.setattr(st, "dataframe", spy(st.dataframe, "auto"))
    monkeypatch.setattr(st, "table", spy(st.table, "content"))
    # Parameter counts (12 values) and the shift-right table at M_target=64: 64 positions.
    answered(["skip-count", "shift-labels"], query={"M": "64"})
    values = heights["measured"]
    assert max(rows for rows, _ in values) >= 12
    assert all(height == "content" for _, height in values)
    rows, height = heights["position"][-1]  # the last run's
    assert rows == 64 and 20 * 30 + 30 < height < 21 * 30 + 30  # 20 rows whole, then half a row


def test_the_evidence_values_are_a_table_that_wraps_each_name_and_value_whole():
    """In st.dataframe's grid the values hid: on a 390 px phone the long names pushed the value column past the
    screen's edge, and at 1280 px the learned table's error message, the evidence for the answer, ended in
    "longer than the learned po…". They are an st.table now, an HTML table whose cells wrap, a header over each
    column; its cells are Markdown, so each is escaped and shows as written ("max |difference|", not a table)."""
    at = answered(["pos-past-max", "pos-add"], topic="Positional encoding")
    assert not [d for d in at.dataframe if "measured" in d.value]  # no values left in a grid
    tables = [t.value for t in at.table if "measured" in t.value]
    assert len(tables) == 2 and all(list(t.columns) == ["measured", "value"] for t in tables)
    error = Context(DEFAULT).evidence("learned_positions").values["learned_error"]
    assert error.startswith("sequence length 9 is longer than the learned positional table (max_len=8)")
    shown = next(v for v in values_shown(at) if "learned table's answer for max_len + 1 positions" in v)
    assert shown["learned table's answer for max_len + 1 positions"] == error  # whole, to its last word
    cells = [cell for t in tables for column in t.columns for cell in t[column]]
    assert r"max \|difference\| from the reversed outputs\, sinusoids added" in cells
    assert all(re.fullmatch(r"(\\[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~\\])*", cell) for cell in cells)  # all escaped


def test_the_evidence_records_are_tables_whose_cells_wrap_and_show_as_written():
    """In st.dataframe's grid the pass's table was 570 px wide in a 390 px phone's 324 px box: "live shape" and
    "formula", the evidence itself, began off-screen. The records are st.tables now, HTML tables whose cells wrap
    under a header each, the asked row still marked in words and shaded; their cells and headers are Markdown, so
    each text is escaped and shows as written ("vocab_size", "W^Q", "#"), and numbers stay numbers."""
    at = answered(["shape-probs", "qkv-q-head", "shift-labels"])
    assert not [d for d in at.dataframe if "your question" in d.value or "position" in d.value]  # no grid left
    shown = {tuple(df.columns): (t, df) for t, df in records_shown(at)}
    assert set(shown) == {("your question", "#", "tensor", "live shape", "formula"),
                          ("your question", "step", "live shape", "formula"), ("position", "decoder input", "label")}
    table, df = shown["your question", "#", "tensor", "live shape", "formula"]
    marked = df[df["your question"] == "▶ asked"]
    assert list(marked["formula"]) == ["(N, M_target, vocab_size)"] and list(marked["tensor"]) == [
        "output probabilities"]
    assert "W^Q of one head" in list(df["tensor"])
    assert "font-weight: bold" in table.proto.arrow_data.styler.styles  # shaded, as in the grid
    cells = [c for t, _ in shown.values() for c in [*t.value.columns, *t.value.to_numpy().ravel()]
             if isinstance(c, str)]  # as drawn
    assert r"\#" in cells and r"\(N\, M\_target\, vocab\_size\)" in cells
    assert all(re.fullmatch(r"(\\[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~\\])*", cell) for cell in cells)  # all escaped
    steps = shown["position", "decoder input", "label"][1]
    assert steps["label"].dtype.kind == "i" and steps["position"].tolist() == list(range(len(steps)))


def test_whole_numbers_in_the_evidence_have_thousands_separators():
    """201326592 had to be counted digit by digit; sizes inside a shape keep none, or (2, 8, 16) at
    the largest sliders, (64, 4,096, 12,288), would read as five sizes."""
    at = answered(["skip-count", "shape-tokens", "mask-blocked"], query={"N": "64", "M": "4096", "E": "12288"})
    counts, sizes, mask = (next(v for v in values_shown(at) if name in v)
                           for name in ("one token embedding, vocab_size × E", "N — batch size",
                                        "mask entries blocked (True)"))
    assert counts["W^Q, W^K, W^V at Llama-2-70B's E=8192, weights only"] == "201,326,592"
    assert counts["token embedding at Llama-2-70B's 32000 × 8192"] == "262,144,000"
    assert counts["LayerNorms in the whole model (a count of modules)"] == "10"
    assert sizes["M — source length"] == "4,096" and sizes["E — embedding size (d_model)"] == "12,288"
    assert mask["mask entries blocked (True)"] == "8,386,560"
    assert mask["key padding mask's shape, (N, M)"] == "(64, 4096)"


def test_the_evidence_names_each_value_in_words_not_by_its_key():
    """A first-time learner read the table's "grad deepest without" as code. Each value is shown under
    the name its experiment gives it: what was measured, and on what."""
    at = answered(["skip-gradient"], topic="Skip connections")
    [shown] = values_shown(at)
    assert list(shown) == [
        "your depth: layers (at most 16)", "depths tried, in layers",
        "gradient norm at the embeddings, your depth, with skips",
        "gradient norm at the embeddings, your depth, no skips", "gradient with skips ÷ without, at your depth",
        "output-input cosine similarity, your depth, with skips",
        "output-input cosine similarity, your depth, no skips",
        "gradient norm at the embeddings, deepest stack, with skips",
        "gradient norm at the embeddings, deepest stack, no skips"]
    v = Context(DEFAULT).evidence("residual_ablation").values
    assert shown["gradient norm at the embeddings, deepest stack, no skips"] == f"{v['grad_deepest_without']:.4g}"
    assert shown["your depth: layers (at most 16)"] == "2" and shown["depths tried, in layers"] == "[1, 2, 4, 8]"


def test_a_shape_questions_evidence_marks_the_row_it_asks_about():
    """The pass's table has 23 rows; the one the question asks for is marked in words (not by
    colour alone), shaded, and named above the table, even when it is an extra past row 14."""
    q = BY_ID["shape-cross"]
    at = answered([q.id], topic=q.topic)
    [(table, df)] = [(t, df) for t, df in records_shown(at) if "your question" in df]
    assert len(df) == 23 and "key" not in df
    marked = df[df["your question"] == "▶ asked"]
    assert list(marked["tensor"]) == ["cross-attention weights"] and list(marked["#"]) == ["extra"]
    assert list(marked["live shape"]) == [str(q.expected(Context(DEFAULT)))]
    assert (df["your question"] == "").sum() == 22
    assert "font-weight: bold" in table.proto.arrow_data.styler.styles
    assert any(m.value.startswith("Your question asks about **cross-attention weights**") for m in at.markdown)


def test_the_evidence_writes_symbols_as_the_learner_does():
    """M_target, d_k, d_ff and vocab_size keep their underscores, each named as the sidebar names it."""
    at = answered(["shape-tokens", "dk-variance"])
    names = sorted((list(v) for v in values_shown(at)), key=len)
    assert names[0] == ["N — batch size", "M — source length", "M_target — target length",  # pass_shapes
                        "E — embedding size (d_model)", "nhead — attention heads", "nhead_kv — K/V heads",
                        "d_k — one head's width, E / nhead",
                        "d_ff — FFN hidden width", "vocab_size — vocabulary size",
                        "layers — layers of each stack"]
    assert {"variance of q·k at your d_k", "width measured: your d_k (at most 1024)",  # score_scaling
            "softmax entropy of q·k / sqrt(d_k), mean over queries"} <= set(names[1])


# The widest E with the narrowest d_ff, where the FFN evidence once built 3.6 billion weights: its cost is
# guarded by test_big_configs_allocate_little (tests/quizzes/test_experiments.py); here, that every evidence renders.
@pytest.mark.parametrize("query", [{"N": "64", "M": "4096", "E": "12288"}, {"N": "1", "M": "1", "E": "1"},
                                   {"N": "3"}, {"E": "12288", "d_ff": "1"}],
                         ids=["largest sliders", "smallest sliders", "N past a cap", "widest E, narrowest d_ff"])
def test_evidence_at_the_slider_extremes_shows_the_learners_own_shapes(query):
    """The GRU's evidence matches the expected answers at every size (past its caps, a smaller
    run's rule applied to the learner's sizes, said in the note); every experiment renders, its
    charts described; a pass question's row is still marked."""
    per_experiment = {}
    for q in QUESTIONS:
        per_experiment.setdefault(q.evidence, q.id)
    at = answered({*per_experiment.values(), "rnn-gru-shape", "rnn-steps", "shape-target"}, query)
    cfg = running(at)
    ctx = Context(cfg)
    shape = "GRU output shape at your sizes, every step"
    steps = "GRU steps, one after another, to read M positions"
    gru = [v for v in values_shown(at) if shape in v]
    assert len(gru) == 3  # rnn-recurrence, rnn-steps and rnn-gru-shape show the dependency maps
    for v in gru:
        assert v[shape] == str(BY_ID["rnn-gru-shape"].expected(ctx)) == str((cfg.N, cfg.M, cfg.E))
        assert v[steps] == f"{BY_ID['rnn-steps'].expected(ctx):,}" == f"{cfg.M:,}"
    if cfg.M > 16:
        assert any(f"At your sizes that is {(cfg.N, cfg.M, cfg.E)}" in c.value for c in at.caption)
    passes = [df for _, df in records_shown(at) if "your question" in df and "tensor" in df]
    marked = [list(df[df["your question"] == "▶ asked"]["tensor"]) for df in passes]
    assert ["target embedding"] in marked and all(len(m) == 1 for m in marked)
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        assert len(spec["description"]) > 40 and spec["config"]["aria"] is spec["config"]["mark"]["aria"] is False


def test_every_evidence_chart_has_a_sentence_for_screen_readers():
    """Vega makes a spec's description the chart's accessible name: each evidence chart says what
    it draws and its figures (all of them when few), and hides its marks from screen readers."""
    per_experiment = {}
    for q in questions_for(None, DEFAULT):
        per_experiment.setdefault(q.evidence, q.id)
    at = answered(per_experiment.values())
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    # Three experiments show a table instead; the influence maps are three charts, the FFN's weights two.
    assert len(specs) == len(per_experiment) - 3 + 2 + 1
    for spec in specs:
        hidden = spec["config"]["aria"] is spec["config"]["mark"]["aria"] is False  # axes, legends and marks
        assert len(spec["description"]) > 40 and hidden, spec.get("description")
    words = {spec["description"].split(". ")[0]: spec["description"] for spec in specs}
    gru = words["Which input positions move which outputs, map 1 of 3: GRU (an RNN)"]
    assert "8 output positions down by 8 input positions across: influence from 0 to" in gru
    assert "28 of 64 cells exactly zero" in gru  # its upper triangle
    assert "influence from 0 to" in words["Which input positions move which outputs, map 3 of 3: masked decoder layer"]
    assert "Heatmap of weight" in words[next(k for k in words if k.endswith("map 2 of 2: layer 1"))]
    assert "whole model (this config): 20,260" in words["Parameter counts from modules built on the meta device"]
    assert "28 of 64 cells are blocked" in words["The causal mask (True = blocked), all 8 positions"]


def test_a_line_chart_of_counts_ticks_whole_numbers_only():
    """The skip connections' chart put ticks at 1.5, 2.5, ... layers, depths no model has; a count on
    the x axis (layers, d_k, positions) gets whole-number ticks, and the values keep their own."""
    at = answered(["skip-gradient", "dk-variance", "pos-past-max"])
    axes = {spec["encoding"]["x"]["field"]: spec["encoding"]["x"]
            for spec in (json.loads(c.proto.spec) for c in at.get("vega_lite_chart"))}
    for field in ("layers", "d_k", "position"):
        assert axes[field]["type"] == "quantitative"
        assert axes[field]["axis"] == {"format": "d", "tickMinStep": 1}, field


def test_a_long_axis_title_is_drawn_on_two_lines_not_cut():
    """Vega cut the skip connections' y title at its axis, "gradient norm at embedding…"."""
    at = answered(["skip-gradient", "dk-variance"])
    titles = {spec["encoding"]["y"]["field"]: spec["encoding"]["y"].get("title")
              for spec in (json.loads(c.proto.spec) for c in at.get("vega_lite_chart"))}
    assert titles["gradient norm at embeddings"] == ["gradient norm", "at embeddings"]
    assert titles["variance"] == "variance"
    assert title_lines("attention parameters") == "attention parameters"  # 20 characters fit
    assert title_lines("abcdefghijklmnopqrstuvwxyz") == "abcdefghijklmnopqrstuvwxyz"  # no space to break at


def test_symbols_in_a_reply_stand_for_the_sizes_the_question_names():
    """The Llama-2-70B question names E=8192: '3*E^2' is right there, though the sidebar has E=16,
    and the page says which values its symbols take."""
    at = quiz_app()
    step_to(at, "Parameter counts", "params-llama-qkv")
    assert any(c.value.startswith("Symbols in your answer stand for this question's sizes, not the sidebar's: "
                                  "E=8,192, nhead=64") for c in at.caption)
    answer(at, "params-llama-qkv", "3*E^2")
    assert "**1 right**" in score_line(at)


def said(at) -> list[str]:
    """The sentences the page puts in a role="alert" box of its own (ui.look.layout.announce)."""
    return [text for h in at.get("html") for text in re.findall(r'role="alert">(.*?)</div>', h.proto.body)]


def test_a_right_answer_is_read_out_once_as_a_wrong_one_is():
    """A screen reader reads st.error out when it appears (Streamlit makes it an alert) but not
    st.success (a status): a right answer met silence, focus still on Check. The page now says
    it, on the run that answers the Check only."""
    at = quiz_app()
    at.selectbox(key="quiz_topic").set_value("The choice of d_k").run()
    answer(at, "dk-value", format_answer(BY_ID["dk-value"], BY_ID["dk-value"].expected(Context(DEFAULT))))
    assert said(at) == ["Q1: right. The explanation and the live evidence follow."]
    at.run()  # any later run: already said
    assert said(at) == [] and any("Right" in s.value for s in at.success)
    at.button(key="quiz_next").click().run()
    answer(at, "dk-count", "1")  # wrong: st.error says it, and only it
    assert said(at) == [] and any("Not quite" in e.value for e in at.error)


def test_a_taken_import_and_a_reset_are_read_out_once():
    """Both answer with a status box (st.success, st.info), which a screen reader leaves unread,
    and a reset takes away the button that had the focus: the page now says each once."""
    at = quiz_app()
    doc = {"format": FORMAT, "version": 1, "answers": {"dk-value": {"correct": True, "given": "8", "expected": "8",
                                                                     "config": DEFAULT.to_dict()}}}
    at.text_area(key="quiz_paste").input(json.dumps(doc)).run()
    at.button(key="quiz_paste_load").click().run()
    assert said(at) == ["Imported 1 answer. Each answer was checked again against the model at the config it was "
                        "answered with."]
    reset_progress(at)
    assert said(at) == ["Progress reset, here and in the copy this browser keeps."]
    at.run()
    assert said(at) == []


def test_every_question_is_a_heading():
    """One heading per question, numbered as on the page, so that a screen reader can walk a topic set
    by its headings."""
    at = answered([], topic="Masking")
    masking = [q for q in QUESTIONS if q.topic == "Masking"]
    assert [h.value for h in at.main.header] == [f"Q{i} · Masking" for i in range(1, len(masking) + 1)]
    assert "Predict, then run" in [c.value for c in at.caption]


def test_symbols_equal_at_this_config_are_still_held_to_the_rows_formula():
    """By default M_target = M = 8, so '(N, M_target)' has the source tokens' numbers, (2, 8); but
    the source tokens are (N, M), and the page says why the right numbers were marked wrong."""
    at = quiz_app()
    at.selectbox(key="quiz_topic").set_value("Shapes").run()
    answer(at, "shape-tokens", "(N, M_target)")
    assert "**1 wrong**" in score_line(at)
    assert [w.value for w in at.warning] == [
        "Your symbols give the right numbers at this config, but not the formula (N, M): two symbols can have the "
        "same value here (by default M_target = M) and still stand for different sizes. Move one of them in the "
        "sidebar to see the difference."]
    answer(at, "shape-tokens", "(2, M)")  # a number is the learner's own value here, so it may stand
    assert "**1 right**" in score_line(at) and not at.warning


def test_a_number_in_the_wrong_symbols_is_marked_wrong_and_told_why():
    at = quiz_app()
    step_to(at, "Masking", "mask-blocked")
    answer(at, "mask-blocked", "M*(M-1)/2")  # 28 at the default, where M = M_target = 8
    assert "**1 wrong**" in score_line(at)
    assert any(w.value.startswith("Your symbols give the right number at this config, but not the formula "
                                  "M_target*(M_target - 1)/2") for w in at.warning)
    assert "Expected, for the config you answered with: `28`, that is `M_target*(M_target - 1)/2`" in [
        m.value for m in at.markdown]


def test_the_formula_as_the_explanation_writes_it_is_read_and_right():
    """The explanation says 'M_target(M_target - 1)/2 entries'; a learner who types just that was told
    the reply could not be read as a number."""
    at = quiz_app()
    step_to(at, "Masking", "mask-blocked")
    answer(at, "mask-blocked", "M_target(M_target - 1)/2")
    assert not at.warning
    assert "**1 right**" in score_line(at)
    assert any("M_target(M_target - 1)/2 entries" in m.value for m in at.markdown)  # the explanation's own words


def test_a_count_written_as_its_explanation_prints_it_is_read_and_right():
    """'4E² + 4E', the explanation's own words under dk-attn-params, was 'could not read that as a number'."""
    at = quiz_app()
    step_to(at, "The choice of d_k", "dk-attn-params")
    answer(at, "dk-attn-params", "4E² + 4E")
    assert not at.warning
    assert "**1 right**" in score_line(at)
    assert any("4E² + 4E" in m.value for m in at.markdown)  # as the explanation prints it


def test_a_teacher_opens_the_answer_key_for_the_sidebars_config():
    """Closed, the key computes nothing; opened, it lists every question about the paper's model with the
    answers and formulas of the sidebar's config, and moves with a slider."""
    at = quiz_app()

    def key_tables():
        [expander] = [e for e in at.expander if e.label == "Answer key, for teachers"]
        return expander.dataframe

    def key_table():
        [table] = key_tables()
        return table.value.set_index("id")

    assert at.session_state["quiz_key_open"] is False and not key_tables()
    at.session_state["quiz_key_open"] = True  # as the expander's click does (on_change reruns)
    at.run()
    assert not at.exception

    table = key_table()
    assert list(table.index) == [q.id for q in questions_for(None, DEFAULT)]
    assert table.loc["shape-memory", "answer"] == "(2, 8, 16)" and table.loc["shape-memory", "formula"] == "(N, M, E)"
    assert table.loc["mask-blocked", "answer"] == "28"
    assert table.loc["dk-why-scale", "answer"].startswith("B) ")  # a choice, with the letter the quiz takes
    at.sidebar.select_slider(key="w_E").set_value(24).run()
    assert key_table().loc["shape-memory", "answer"] == "(2, 8, 24)"


def test_the_answer_key_names_its_sizes_and_the_numbers_a_learner_sees():
    """A teacher reads the key off a projector with the sidebar closed, and students ask about "Q2 of
    masking": the key says its sizes in words, and each row has the number the quiz shows over it."""
    at = make_app({"N": "4", "M": "16", "E": "64", "nhead": "4"}).run()
    at.switch_page("pages/quiz.py").run()
    at.session_state["quiz_key_open"] = True
    at.run()
    assert not at.exception
    [expander] = [e for e in at.expander if e.label == "Answer key, for teachers"]
    assert expander.caption[0].value.startswith(
        "Spoilers: every question's expected answer, and its formula in symbols where it has one, at N=4, M=16, "
        "M_target=16, E=64, nhead=4 (d_k=16), d_ff=256, vocab_size=100, layers=2, sinusoidal positions. ")
    table = expander.dataframe[0].value.set_index("id")
    assert list(table["Q"]) == [f"Q{i}" for i in range(1, ASKED + 1)]
    assert tuple(table.loc["mask-diagonal", ["Q", "Q in topic"]]) == ("Q42", "Q1 · Masking")
    assert table.loc["shape-memory", "answer"] == "(4, 16, 64)"
    # What the quiz itself shows over that question, with its topic chosen.
    at.selectbox(key="quiz_topic").set_value("Masking").run()
    assert [h.value for h in at.main.header] == ["Q1 · Masking"]
    assert [r.key for r in at.radio if r.key.startswith("ans_")] == ["ans_mask-diagonal"]


def test_the_quiz_names_every_size_its_answers_turn_on():
    """The parameter counts depend on d_ff and on tied embeddings: the line over the quiz names them too."""
    at = make_app({"d_ff": "100", "tie_embeddings": "true"}).run()
    at.switch_page("pages/quiz.py").run()
    assert at.main.caption[0].value == (
        "Shapes, numbers and predictions follow the live model at the sidebar's sizes, N=2, M=8, M_target=8, E=16, "
        "nhead=2 (d_k=8), d_ff=100, vocab_size=100, layers=2, sinusoidal positions, tied embeddings.")


MORE_LABEL = "Shuffle, reset and score per topic"


def more(at):
    """The expander, under the question, of the controls a learner reaches for now and then."""
    [expander] = [e for e in at.main.expander if e.label.startswith(MORE_LABEL)]
    return expander


def test_the_shuffle_reset_and_score_per_topic_wait_in_one_expander_under_the_question():
    """They stood open over the first question and put it below a laptop's fold. In their expander, under
    the question, they are closed until opened, and each still works there: the seed shuffles (and its
    label says so), Reset asks first and forgets, the table counts every answer, and the note on saved
    progress sits by Reset."""
    at = quiz_app()
    browser_reports(at, "")
    box = more(at)
    assert box.label == MORE_LABEL and not box.proto.expanded
    assert [n.key for n in box.number_input] == ["quiz_seed"] and [b.key for b in box.button] == ["quiz_ask_reset"]
    assert [n.key for n in at.main.number_input] == ["quiz_seed"]  # nowhere else on the page
    assert box.caption[0].value.startswith(":material/save: Your answers are kept in this browser")
    assert len([c for c in at.main.caption if "kept in this browser" in c.value]) == 1  # the expander's only

    answer_dk_value(at, "5")  # wrong (d_k = 8)
    table = more(at).dataframe[0].value.set_index("topic")
    assert tuple(table.loc["The choice of d_k", ["answered", "right", "wrong"]]) == (1, 0, 1)
    assert table["answered"].sum() == 1

    at.number_input(key="quiz_seed").set_value(7).run()
    assert more(at).label == f"{MORE_LABEL} · shuffled, seed 7"
    shuffled = list(questions_for("The choice of d_k"))
    random.Random(7).shuffle(shuffled)
    assert counter(at) == "Question 1 of 10" and at.main.header[0].value.startswith("Q1 · ")
    assert any(m.value == shuffled[0].text(Context(DEFAULT)) for m in at.markdown)

    at.button(key="quiz_ask_reset").click().run()  # asks, inside the expander, right under Reset
    assert more(at).warning[0].value.startswith("Forget every answer")
    assert [b.key for b in more(at).button] == ["quiz_ask_reset", "quiz_reset", "quiz_keep"]
    at.button(key="quiz_keep").click().run()
    assert not more(at).warning and "dk-value" in at.session_state["quiz_progress"]["answers"]
    reset_progress(at)
    assert not at.session_state["quiz_progress"]["answers"] and more(at).dataframe[0].value["answered"].sum() == 0
    at.number_input(key="quiz_seed").set_value(0).run()
    assert more(at).label == MORE_LABEL
    assert not at.exception


def asks_to_reset(at) -> bool:
    """Whether the expander holds Reset's question or its Yes."""
    return bool(more(at).warning) or "quiz_reset" in [b.key for b in more(at).button]


def watches_the_expander(at) -> bool:
    """Whether the browser is to say when the expander closes (ui.components.expander_closed)."""
    return "quiz_more_closed" in [getattr(e, "key", None) for e in at.sidebar]


def test_reset_progress_asks_until_the_learners_next_action_only():
    """Reset's question waited for a Yes whatever the learner did next: in the expander after they had
    closed it, or on the quiz they came back to from another page. Any action but Yes and Keep them is
    now a no, and every answer stays."""
    at = quiz_app()
    browser_reports(at, "")
    answer_dk_value(at, "5")
    at.button(key="quiz_ask_reset").click().run()
    assert asks_to_reset(at)
    at.run()  # another run, as closing the expander starts (ui.components.expander_closed reports it)
    assert not asks_to_reset(at) and "dk-value" in at.session_state["quiz_progress"]["answers"]

    at.button(key="quiz_ask_reset").click().run()  # a new press asks anew, and the browser watches the expander
    assert asks_to_reset(at) and watches_the_expander(at)
    at.button(key="quiz_next").click().run()
    assert not asks_to_reset(at) and "dk-value" in at.session_state["quiz_progress"]["answers"]
    assert not watches_the_expander(at)  # only while the question waits

    at.button(key="quiz_ask_reset").click().run()
    at.switch_page("pages/explorer.py").run()
    at.switch_page("pages/quiz.py").run()
    assert not asks_to_reset(at) and "dk-value" in at.session_state["quiz_progress"]["answers"]
    reset_progress(at)  # Yes, straight after Reset, still forgets
    assert not at.session_state["quiz_progress"]["answers"] and not asks_to_reset(at)
    assert not at.exception


def test_another_tabs_save_straight_after_reset_leaves_its_question_waiting():
    """The press of Reset saves, and when another tab of the browser has saved since, the browser refuses and
    reports it: a run the learner did not start. It withdrew the question a moment after it showed (seen in
    Chromium with two tabs); the question waits for the learner now, and its Yes forgets every answer."""
    a, b = quiz_app(), quiz_app()
    browser_reports(a, "")
    browser_reports(b, "")
    answer_dk_value(a, "5")
    b_first = answer_first_masking(b)
    a.button(key="quiz_ask_reset").click().run()
    assert asks_to_reset(a)
    other_tab_saved(a, stored_copy(b))  # the browser refused the save of Reset's run: b's answer is merged in
    assert set(a.session_state["quiz_progress"]["answers"]) == {"dk-value", b_first}
    assert asks_to_reset(a) and watches_the_expander(a)
    a.button(key="quiz_reset").click().run()
    assert not a.session_state["quiz_progress"]["answers"] and not asks_to_reset(a)
    assert any("Progress reset" in i.value for i in a.info)
    a.run()  # the learner's next action, whatever it is, still withdraws a question
    a.button(key="quiz_ask_reset").click().run()
    a.run()
    assert not asks_to_reset(a)


def test_an_import_while_resets_question_waits_answers_it_no():
    """Opening "Save or restore progress" to export, as the question advises, leaves it waiting (a browser test
    shows it); an import from there replaces the answers the question was about, and withdraws it."""
    at = quiz_app()
    browser_reports(at, "")
    at.button(key="quiz_ask_reset").click().run()
    doc = {"format": FORMAT, "version": 1, "answers": {"dk-value": {"correct": True, "given": "8", "expected": "8"}}}
    at.text_area(key="quiz_paste").input(json.dumps(doc)).run()
    at.button(key="quiz_paste_load").click().run()
    assert not asks_to_reset(at) and "dk-value" in at.session_state["quiz_progress"]["answers"]


def test_where_storage_is_blocked_the_page_says_so_over_the_question_not_in_the_expander():
    at = quiz_app()
    browser_reports(at, available=False)
    assert any("storage is blocked" in i.value for i in at.main.info)
    assert not any("kept in this browser" in c.value for c in more(at).caption)


def test_mode_topic_and_review_share_one_row_over_the_question():
    """One row that wraps where it must (a projector's 1024 px, a phone), right over Previous and Next:
    what to be asked, and how. Each keeps its label (and its help, see
    test_the_mode_and_the_review_say_what_they_do)."""
    at = quiz_app()
    row = keyed_row(at, "quiz_controls")
    flex = row.proto.flex_container
    assert flex.direction == flex.HORIZONTAL and flex.wrap
    assert [(child.type, child.key) for child in row.children.values()] == [
        ("radio", "quiz_mode"), ("selectbox", "quiz_topic"), ("toggle", "quiz_review")]
    assert [child.label for child in row.children.values()] == ["Mode", "Topic", "Review what I missed"]
    # This row, then Previous and Next (rows without a key, as the seed's and Reset's in the expander under
    # the question, are left out).
    names = [b.proto.id.rsplit("-", 1)[-1] for b in blocks(at.main) if b.type == "flex_container" and b.proto.id]
    first = names.index("quiz_controls")
    assert names[first:first + 2] == ["quiz_controls", "quiz_nav"]


def test_only_the_intro_the_score_and_the_questions_controls_stand_over_the_first_question():
    """On a 390 x 844 phone only Q1's heading was above the fold, its text at 842 to 894 px: over it stood
    the intro's four lines, the score, the expander of shuffle, reset and score per topic, the row of mode,
    topic and review, and Previous and Next. The expander now waits under the question, over Save or restore
    progress, and the intro takes three lines there; nothing is left out."""
    at = quiz_app()
    top = list(at.main.children.values())
    over = [b.type for b in top[:[b.type for b in top].index("header")]]
    assert over == ["title", "caption", "flex_container", "markdown", "flex_container", "flex_container"]
    assert top[3].value.startswith("Score:")  # after the messages' box, empty here
    keys = [b.proto.id.rsplit("-", 1)[-1] for b in top if b.type == "flex_container"]
    assert keys[:3] == ["quiz_messages", "quiz_controls", "quiz_nav"]
    names = [b.label if b.type == "expander" else b.type for b in blocks(at.main) if b.type in ("expander", "header")]
    assert names == ["header", MORE_LABEL, "Save or restore progress", "Answer key, for teachers"]
    assert len(at.main.caption[0].value) <= 200  # the intro: three lines of a 390 px phone at these sizes


def test_a_links_shuffle_is_named_on_the_closed_expander():
    """A link's seed= shuffles the quiz unasked; the seed's box is out of sight, so the expander says it."""
    at = open_page("quiz", {"topic": "masking", "seed": "7", "q": "2"})
    assert not at.exception and at.number_input(key="quiz_seed").value == 7
    assert more(at).label == f"{MORE_LABEL} · shuffled, seed 7"


def map_specs(at) -> list[dict]:
    """The influence maps' charts on the page, in order: one per model."""
    return [s for s in (json.loads(c.proto.spec) for c in at.get("vega_lite_chart"))
            if s.get("encoding", {}).get("x", {}).get("field") == "input position"]


def test_influence_maps_of_different_sizes_are_described_and_drawn_each_at_its_own():
    """At M=2, M_target=5 the decoder's map is 5 by 5 and the others 2 by 2: the sentence said 'each 5 output
    positions down by 5 input positions across' of all three, and the maps shared one 5-wide grid."""
    at = answered(["rnn-decoder-map"], {"M": "2", "M_target": "5"})
    gru, encoder, decoder = map_specs(at)
    size = "Heatmap of influence, {0} output positions down by {0} input positions across"
    assert f"GRU (an RNN). {size.format(2)}" in gru["description"]
    assert f"encoder layer. {size.format(2)}" in encoder["description"]
    assert f"masked decoder layer. {size.format(5)}" in decoder["description"]
    assert "each" not in gru["description"] + decoder["description"]


def test_the_influence_maps_are_charts_of_their_own_in_a_row_that_wraps():
    """As one Vega facet the three maps were 727 px wide, and on a 390 px phone they scrolled sideways in
    their 358 px box. Each is now a chart of its own, at its own width (180 px plot, its legend under it,
    235 px in all), in a horizontal row that wraps: side by side on a laptop, one under another on a phone.
    Each keeps its model's name as its title, and all three share one colour scale, as the facet's did."""
    at = answered(["rnn-decoder-map"])
    specs = map_specs(at)
    assert [s["title"] for s in specs] == ["GRU (an RNN)", "encoder layer", "masked decoder layer"]
    assert not any("facet" in s or "hconcat" in s for s in specs)
    for spec in specs:
        assert (spec["width"], spec["height"]) == (180, 180) and spec["autosize"]["type"] == "pad"
        assert spec["encoding"]["color"]["legend"]["orient"] == "bottom"
    influence = [row["influence"] for row in EXPERIMENTS["dependency_maps"](DEFAULT).records]
    domains = [s["encoding"]["color"]["scale"]["domain"] for s in specs]
    assert domains == [[min(influence), max(influence)]] * 3  # one scale: a shade means the same on each map
    [row] = [b for b in blocks(at.main) if b.type == "flex_container" and b.proto.flex_container.wrap
             and [c.type for c in b.children.values()] == ["vega_lite_chart"] * 3]
    assert row.proto.flex_container.direction == row.proto.flex_container.HORIZONTAL


def test_a_gradient_ratio_over_no_gradient_reads_infinite():
    """At d_ff=1 no gradient reaches the embeddings without the skips: the ratio read 0, and the note said nothing."""
    at = answered(["skip-gradient"], {"d_ff": "1"})
    [values] = [v for v in values_shown(at) if "gradient with skips ÷ without, at your depth" in v]
    assert values["gradient with skips ÷ without, at your depth"] == "infinite"
    assert any("no gradient reaches the embeddings" in c.value for c in at.caption)


def test_a_one_position_source_still_shows_entropies_over_16_keys():
    """At M = 1 the entropies were taken over one key, 0 either way; the probe now always uses 16 keys."""
    at = answered(["dk-entropy"], {"M": "1"})
    [values] = [v for v in values_shown(at) if "softmax entropy of q·k, mean over queries" in v]
    assert values["keys per softmax: 16, whatever M is"] == "16"
    assert float(values["softmax entropy of q·k, mean over queries"]) < float(
        values["softmax entropy of q·k / sqrt(d_k), mean over queries"])


def test_the_softmax_axis_probe_gives_no_layernorm_reason_at_a_narrow_E():
    """The probe is attention alone, with no LayerNorm, yet at E = 1 its note said it ran at E = 4 because a
    LayerNorm over one number always gives its bias."""
    from core import TransformerConfig
    from quizzes.experiments import run

    ev = run("softmax_axis", TransformerConfig(N=1, M=4, E=1, nhead=1, vocab_size=20))
    assert "LayerNorm" not in ev.note and ev.values["row_sums_all_one"]
    assert "LayerNorm" in run("dependency_maps", TransformerConfig(N=1, M=4, E=1, nhead=1, vocab_size=20)).note


LLAMA_LIKE = TransformerConfig(arch="decoder-only", nhead=4, nhead_kv=2, positional="rope", norm="rmsnorm",
                               activation="swiglu", norm_first=True, bias=False)


def test_a_decoder_only_link_says_how_many_questions_apply_and_a_new_one_is_answered_right():
    """?arch=decoder-only&nhead_kv=2&positional=rope&...: the page counts the family's questions, offers none
    about the paper's two stacks, and marks a KV-cache question right with the model's own answer, in numbers
    and in symbols, with its evidence."""
    at = open_page("quiz", config_link(LLAMA_LIKE) | {"topic": "kv-cache"})
    assert not at.exception
    mine = questions_for(None, LLAMA_LIKE)
    assert score_line(at) == (f"Score: **0 right**, **0 wrong**, {len(mine)} not tried yet, counting only the "
                              f"questions about this model: {len(mine)} of {len(QUESTIONS)} questions apply to "
                              "decoder-only.")
    others = sum("decoder-only" in q.families for q in QUESTIONS) - len(mine)
    help_text = next(m.help for m in at.markdown if m.value.startswith("Score:"))
    assert help_text.startswith(f"{others} more of the decoder-only family's questions ask about parts this model")
    assert at.selectbox(key="quiz_topic").value == "KV cache"
    assert "Question 1 of 5" in [m.value for m in at.markdown]
    q = BY_ID["kv-shape"]
    expected = q.expected(Context(LLAMA_LIKE))
    assert expected == (2, 2, 2, 2, 8, 4)  # (layers, 2, N, nhead_kv, M, d_k)
    answer(at, "kv-shape", "(layers, 2, N, nhead_kv, M, d_k)")
    assert any("Right" in s.value for s in at.success)
    assert any("Live evidence" in m.value for m in at.markdown)
    at.button(key="quiz_next").click().run()
    answer(at, "kv-bytes", str(BY_ID["kv-bytes"].expected(Context(LLAMA_LIKE)) + 2))  # two bytes too many
    assert any("Not quite" in e.value for e in at.error)
    line = score_line(at)
    assert "**1 right**" in line and "**1 wrong**" in line

    # Every question of the family on one page: none about cross-attention, M_target or the source.
    at.selectbox(key="quiz_topic").set_value("All topics").run()
    at.radio(key="quiz_mode").set_value("A topic set").run()
    assert not at.exception
    shown = {k.key[4:] for k in [*at.text_input, *at.radio] if k.key and k.key.startswith("ans_")}
    assert shown == {q.id for q in mine}
    assert not {"shape-cross", "shape-target", "mask-blocked", "shift-targets"} & shown


def test_the_papers_model_has_no_kv_cache_question_and_says_so():
    at = open_page("quiz", {"topic": "kv-cache"})
    assert not at.exception
    assert any("None of this topic's questions is about this encoder-decoder model" in i.value for i in at.info)
    assert score_line(at).endswith(f"{ASKED} of {len(QUESTIONS)} questions apply to encoder-decoder.")


def test_the_score_counts_the_questions_about_the_family_shown_and_says_so():
    """Answers to the encoder-decoder's own questions wait while the sidebar shows decoder-only: "0 right,
    4 wrong" becomes "0 right, 1 wrong", and the line says which questions it counts."""
    both = sorted(q.id for q in questions_for(None, DEFAULT) if q.applies(DEFAULT.replace(arch="decoder-only",
                                                                                             M_target=None)))
    only = sorted(q.id for q in questions_for(None, DEFAULT) if q.id not in both)
    at = architecture_opened(answered(both[:1] + only[:3])).run()
    assert score_line(at).startswith("Score: **0 right**, **4 wrong**")
    at.sidebar.radio(key="w_arch").set_value("decoder-only").run()
    decoder = questions_for(None, running(at))
    assert score_line(at) == (f"Score: **0 right**, **1 wrong**, {len(decoder) - 1} not tried yet, counting only the "
                              f"questions about this model: {len(decoder)} of {len(QUESTIONS)} questions apply to "
                              "decoder-only. Your 3 answers to questions about other models are kept, and count again "
                              "when the sidebar shows such a model.")
    at.sidebar.radio(key="w_arch").set_value("encoder-decoder").run()
    assert score_line(at).startswith("Score: **0 right**, **4 wrong**") and "kept" not in score_line(at)


def test_a_mixture_of_experts_preset_is_asked_about_its_experts_and_the_default_model_is_not():
    """A link to the Tiny MoE preset shows the experts' questions (and answers one, with its live evidence); the
    default model, a dense FFN, shows none of them."""
    from core.config import PRESETS, TINY_MOE

    topic = "Mixture of experts"
    preset = next(name for name, cfg in PRESETS.items() if cfg == TINY_MOE)

    def shown(at) -> set[str]:
        at.selectbox(key="quiz_topic").set_value(topic).run()
        at.radio(key="quiz_mode").set_value("A topic set").run()
        assert not at.exception
        return {w.key[4:] for w in [*at.text_input, *at.radio] if w.key and w.key.startswith("ans_")}

    at = open_page("quiz", {"preset": preset})
    assert shown(at) == {q.id for q in questions_for(topic, TINY_MOE)} == {q.id for q in QUESTIONS if q.topic == topic}
    q = BY_ID["moe-router-shape"]
    answer(at, q.id, format_answer(q, q.expected(Context(TINY_MOE))))
    assert any("Right" in s.value for s in at.success)
    assert any(m.value.startswith("**Live evidence") for m in at.markdown)
    default = quiz_app()
    assert shown(default) == set()
    assert any("None of this topic's questions" in i.value for i in default.info)


def test_a_question_another_family_hides_gives_way_to_the_next_and_comes_back_with_its_family():
    """At a question about the encoder-decoder alone, decoder-only shows the next question that applies to it, and
    the encoder-decoder again shows the same question, not the one at its old number."""
    from ui.link.choices import ALL_TOPICS, quiz_order

    everyone = [q.id for q in quiz_order(ALL_TOPICS, 0)]
    numbered = [q.id for q in quiz_order(ALL_TOPICS, 0, DEFAULT)]  # the encoder-decoder's Q1, Q2, ...
    decoder = DEFAULT.replace(arch="decoder-only", M_target=None)
    place = next(i for i, qid in enumerate(numbered) if i > 3 and not BY_ID[qid].applies(decoder))
    at = architecture_opened(make_app({"q": f"Q{place + 1}"}))
    at.switch_page("pages/quiz.py").run()
    assert at.session_state["quiz_at"] == numbered[place]
    at.sidebar.radio(key="w_arch").set_value("decoder-only").run()
    assert not at.exception
    after = everyone[everyone.index(numbered[place]):]
    assert at.session_state["quiz_at"] == next(qid for qid in after if BY_ID[qid].applies(decoder))
    at.sidebar.radio(key="w_arch").set_value("encoder-decoder").run()
    assert not at.exception
    assert at.session_state["quiz_at"] == numbered[place] and at.query_params["q"] == str(place + 1)
    assert f"Question {place + 1} of {ASKED}" in [m.value for m in at.markdown]


@pytest.mark.parametrize("arch, names", [("encoder-decoder", "N, M, M_target and vocab_size"),
                                         ("decoder-only", "N, M and vocab_size")])
def test_the_caption_names_every_size_a_text_sets(arch, names):
    at = make_app({"arch": arch}).run()
    at.text_area(key="yt_text").input("the cat sat on the mat").run()
    at.switch_page("pages/quiz.py").run()
    assert not at.exception
    assert any(c.value.endswith(f" {names} come from your text.") for c in at.caption)
