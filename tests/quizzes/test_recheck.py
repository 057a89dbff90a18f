"""Marking an imported progress file again: nothing a file says about right and wrong is taken on trust."""

import json

from core import DEFAULT
from quizzes import BY_ID, QUESTIONS, Context, check, format_answer, questions_for
from quizzes.progress import dumps, load_progress, new_progress, record
from quizzes.recheck import Rechecked, recheck

from .conftest import CONFIG_B


def loaded(progress: dict) -> dict:
    """A progress as it comes back from an exported file."""
    doc, note = load_progress(dumps(progress))
    assert doc is not None and note == ""
    return doc


def test_every_right_answer_at_a_config_stays_right_and_nothing_changes(ctx_b):
    """The file the quiz itself exports, every question answered as the answer key writes it, at a
    config that is not the default one: marked again, nothing moves."""
    progress = new_progress()
    asked = questions_for(None, CONFIG_B)
    for q in asked:
        progress = record(progress, q.id, format_answer(q, q.expected(ctx_b)), True,
                          format_answer(q, q.expected(ctx_b)), CONFIG_B.to_dict())
    doc = loaded(progress)
    again, outcome = recheck(doc, Context)
    assert outcome == Rechecked(checked=len(asked), now_wrong=0, now_right=0, at_default=0, left_out=0)
    assert again == doc


def test_a_right_mark_typed_into_a_file_is_taken_back():
    """The exploration's finding: "correct": true edited into an export showed "Right." beside a wrong answer."""
    q = BY_ID["dk-value"]  # d_k = E / nhead: 8 at the default config
    doc = loaded(record(new_progress(), q.id, "5", False, "8", DEFAULT.to_dict()))
    doc["answers"][q.id]["correct"] = True
    doc["answers"][q.id]["expected"] = "5"  # a careful forger edits the expected answer too
    again, outcome = recheck(doc, Context)
    assert again["answers"][q.id]["correct"] is False and again["answers"][q.id]["expected"] == "8"
    assert (outcome.now_wrong, outcome.now_right) == (1, 0)
    assert outcome.summary() == ("Each answer was checked again against the model at the config it was answered "
                                 "with: 1 that the file marked right is wrong, and is marked so here.")


def test_an_answer_is_checked_at_the_config_it_names_not_at_the_default(ctx_b):
    q = BY_ID["dk-value"]
    d_k = q.expected(ctx_b)  # 6 at CONFIG_B
    assert d_k != q.expected(Context(DEFAULT))
    doc = loaded(record(new_progress(), q.id, str(d_k), False, "0", CONFIG_B.to_dict()))
    again, outcome = recheck(doc, Context)
    assert again["answers"][q.id] == {**doc["answers"][q.id], "correct": True, "expected": str(d_k)}
    assert (outcome.now_wrong, outcome.now_right, outcome.at_default) == (0, 1, 0)
    assert "1 that the file marked wrong is right" in outcome.summary()


def test_without_a_config_it_can_use_an_answer_is_checked_and_recorded_at_the_default():
    """A file with no config, or one the app could not have run, still loads: at the default config,
    which the note names. A question whose answer is the same at every config is not counted."""
    doc = {"format": "transformer-shape-explorer/quiz-progress", "version": 1, "answers": {
        "dk-value": {"correct": False, "given": "8", "expected": "x"},  # right at the default config
        "shape-tokens": {"correct": True, "given": "(3, 3)", "expected": "(3, 3)",
                         "config": {"N": 3, "M": 3, "E": 10, "nhead": 3}},  # no valid config
        "rnn-recurrence": {"correct": True, "given": "nonsense", "expected": "nonsense"}}}
    doc, _ = load_progress(json.dumps(doc))
    again, outcome = recheck(doc, Context)
    assert {qid: entry["correct"] for qid, entry in again["answers"].items()} == {
        "dk-value": True, "shape-tokens": False, "rnn-recurrence": False}
    assert all(entry["config"] == DEFAULT.to_dict() for entry in again["answers"].values())
    assert outcome == Rechecked(checked=3, now_wrong=2, now_right=1, at_default=2, left_out=0)
    assert outcome.summary().endswith(" 2 of them name no config the sliders can show, so they were checked at "
                                      "the default config.")
    # The app's own rule: a config that is valid but off its sliders is not used either.
    off = loaded(record(new_progress(), "dk-value", "6", True, "6", CONFIG_B.to_dict()))
    again, outcome = recheck(off, Context, config_of=lambda entry: None)
    assert again["answers"]["dk-value"]["correct"] is False and outcome.at_default == 1


def test_an_answer_whose_expected_value_fails_to_compute_is_left_out():
    doc = loaded(record(record(new_progress(), "dk-value", "8", True, "8", DEFAULT.to_dict()),
                        "dk-count", "2", True, "2", CONFIG_B.to_dict()))

    def context_for(cfg):
        if cfg == CONFIG_B:
            raise MemoryError("the experiment ran out of memory")
        return Context(cfg)

    again, outcome = recheck(doc, context_for)
    assert list(again["answers"]) == ["dk-value"] and outcome.left_out == 1
    assert outcome.summary().endswith(" One answer could not be checked, and was left out.")
    assert check(BY_ID["dk-value"], 8, again["answers"]["dk-value"]["given"])


def test_one_context_per_config():
    """Answers at one config share one trace and its experiments, as the app's cache would."""
    progress = new_progress()
    for q in QUESTIONS[:12]:
        progress = record(progress, q.id, "?", False, "?", (DEFAULT if q.parametric else CONFIG_B).to_dict())
    made = []

    def context_for(cfg):
        made.append(cfg)
        return Context(cfg)

    recheck(loaded(progress), context_for)
    assert sorted(made, key=repr) == sorted([DEFAULT, CONFIG_B], key=repr)
