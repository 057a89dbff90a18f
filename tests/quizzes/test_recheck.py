"""Marking an imported progress file again: nothing a file says about right and wrong is taken on trust."""

import json

from core import DEFAULT
from core.tokens import text_config, tokenize
from quizzes import BY_ID, QUESTIONS, Context, check, format_answer, questions_for
from quizzes.progress import TEXT_OMITTED, dumps, load_progress, new_progress, record
from quizzes.recheck import Rechecked, new_context, recheck

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
    again, outcome = recheck(doc, new_context)
    assert outcome == Rechecked(checked=len(asked), now_wrong=0, now_right=0, at_default=0, left_out=0)
    assert again == doc


def test_a_right_mark_typed_into_a_file_is_taken_back():
    """The exploration's finding: "correct": true edited into an export showed "Right." beside a wrong answer."""
    q = BY_ID["dk-value"]  # d_k = E / nhead: 8 at the default config
    doc = loaded(record(new_progress(), q.id, "5", False, "8", DEFAULT.to_dict()))
    doc["answers"][q.id]["correct"] = True
    doc["answers"][q.id]["expected"] = "5"  # a careful forger edits the expected answer too
    again, outcome = recheck(doc, new_context)
    assert again["answers"][q.id]["correct"] is False and again["answers"][q.id]["expected"] == "8"
    assert (outcome.now_wrong, outcome.now_right) == (1, 0)
    assert outcome.summary() == ("Each answer was checked again against the model at the config it was answered "
                                 "with: 1 that the file marked right is wrong, and is marked so here.")


def test_an_answer_is_checked_at_the_config_it_names_not_at_the_default(ctx_b):
    q = BY_ID["dk-value"]
    d_k = q.expected(ctx_b)  # 6 at CONFIG_B
    assert d_k != q.expected(Context(DEFAULT))
    doc = loaded(record(new_progress(), q.id, str(d_k), False, "0", CONFIG_B.to_dict()))
    again, outcome = recheck(doc, new_context)
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
    again, outcome = recheck(doc, new_context)
    assert {qid: entry["correct"] for qid, entry in again["answers"].items()} == {
        "dk-value": True, "shape-tokens": False, "rnn-recurrence": False}
    assert all(entry["config"] == DEFAULT.to_dict() for entry in again["answers"].values())
    assert outcome == Rechecked(checked=3, now_wrong=2, now_right=1, at_default=2, left_out=0)
    assert outcome.summary().endswith(" 2 of them name no config the sliders can show, so they were checked at "
                                      "the default config.")
    # The app's own rule: a config that is valid but off its sliders is not used either.
    off = loaded(record(new_progress(), "dk-value", "6", True, "6", CONFIG_B.to_dict()))
    again, outcome = recheck(off, new_context, config_of=lambda entry: None)
    assert again["answers"]["dk-value"]["correct"] is False and outcome.at_default == 1


def test_an_answer_whose_expected_value_fails_to_compute_is_left_out():
    doc = loaded(record(record(new_progress(), "dk-value", "8", True, "8", DEFAULT.to_dict()),
                        "dk-count", "2", True, "2", CONFIG_B.to_dict()))

    def context_for(cfg, text):
        if cfg == CONFIG_B:
            raise MemoryError("the experiment ran out of memory")
        return Context(cfg, text=text)

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

    def context_for(cfg, text):
        made.append(cfg)
        return Context(cfg, text=text)

    recheck(loaded(progress), context_for)
    assert sorted(made, key=repr) == sorted([DEFAULT, CONFIG_B], key=repr)


# A learner's text whose sizes are none of the example's ("the cat sat on the mat": N=1, M=11, vocab_size=7).
MY_TEXT = tokenize("one two\nthree", "word")  # N=2, M=3, vocab_size=5
MY_CONFIG = text_config(CONFIG_B, MY_TEXT)  # the quiz's config with that text in the box


def on_my_text() -> tuple[dict, dict[str, str]]:
    """An export with answers on MY_TEXT, three right there and one wrong there (but right on the example);
    and each question's expected answer on that text. Row 1's shape is read off the pass at the text's sizes;
    the others off the text itself, and differ on the example."""
    ctx = Context(MY_CONFIG, text=MY_TEXT)
    example = Context(MY_CONFIG)
    progress, expected = new_progress(), {}
    # (not a repeated-token question: "one two" repeats no token, so those ask about the example's)
    for qid in ("yt-count-word", "yt-row1", "yt-count-char"):
        q = BY_ID[qid]
        expected[qid] = format_answer(q, q.expected(ctx))
        assert qid == "yt-row1" or expected[qid] != format_answer(q, q.expected(example))
        progress = record(progress, qid, expected[qid], True, expected[qid], MY_CONFIG.to_dict(), text=MY_TEXT)
    q = BY_ID["yt-vocab-word"]
    expected[q.id] = format_answer(q, q.expected(ctx))  # 4 for "one two"; the example's is 7
    progress = record(progress, q.id, format_answer(q, q.expected(example)), False, expected[q.id],
                      MY_CONFIG.to_dict(), text=MY_TEXT)
    return loaded(progress), expected


def test_an_answer_on_the_learners_text_is_marked_again_on_that_text():
    """An answer right on the learner's own text came back wrong, marked against the example text: from an
    import, and from the browser's own copy (keep) the next day. Marked on the text it kept, nothing moves."""
    doc, expected = on_my_text()
    assert doc["answers"]["yt-row1"]["text"] == {"text": "one two\nthree", "tokens": "word"}
    made = []

    def context_for(cfg, text):
        made.append((cfg, text))
        return Context(cfg, text=text)

    for keep in (False, True):
        made.clear()
        again, outcome = recheck(doc, context_for, keep=keep)
        assert made == [(MY_CONFIG, MY_TEXT)]  # the four answers share one context
        assert outcome == Rechecked(checked=4, now_wrong=0, now_right=0, at_default=0, left_out=0)
        assert {qid: (e["correct"], e["expected"]) for qid, e in again["answers"].items()} == {
            "yt-count-word": (True, expected["yt-count-word"]), "yt-row1": (True, "(2, 3)"),
            "yt-count-char": (True, expected["yt-count-char"]), "yt-vocab-word": (False, "4")}
        assert again == doc


def test_an_answer_on_a_text_is_checked_at_the_sizes_its_text_sets_not_the_files():
    """A file that names other sizes than its text's (edited, or checked at the default config) is checked,
    and recorded, at the sizes the text sets, as the quiz would have had them."""
    doc, _ = on_my_text()
    doc["answers"]["yt-row1"]["config"] = CONFIG_B.to_dict()  # N=3, M=6: not the text's
    doc["answers"]["yt-row1"]["given"] = "(3, 6)"
    again, outcome = recheck(doc, new_context)
    assert again["answers"]["yt-row1"]["correct"] is False and again["answers"]["yt-row1"]["expected"] == "(2, 3)"
    assert again["answers"]["yt-row1"]["config"] == MY_CONFIG.to_dict() and outcome.now_wrong == 1
    again, outcome = recheck(doc, new_context, config_of=lambda entry: None)  # no config the sliders show
    assert again["answers"]["yt-count-word"]["correct"] is True  # the count is the text's, at any config
    assert again["answers"]["yt-row1"]["config"] == text_config(DEFAULT, MY_TEXT).to_dict()


def test_an_answer_whose_text_was_too_long_to_keep_cannot_be_checked():
    """Too long to keep, the text is not in the file, and the answer is not marked on the example instead:
    left out of an import, kept as it was in the browser's copy. So is one whose text holds no tokens."""
    long_text = tokenize("\n".join(["abcdefghij " * 40] * 10), "char")  # 4,409 characters
    q = BY_ID["yt-count-char"]
    doc = loaded(record(new_progress(), q.id, "440", True, "440", text_config(DEFAULT, long_text).to_dict(),
                        text=long_text))
    assert doc["answers"][q.id]["text"] == TEXT_OMITTED
    again, outcome = recheck(doc, new_context)
    assert again["answers"] == {} and outcome.left_out == 1 and outcome.checked == 0
    assert outcome.summary() == "One answer could not be checked, and was left out."
    again, outcome = recheck(doc, new_context, keep=True)
    assert again == doc and outcome.left_out == 1 and outcome.checked == 0
    assert outcome.restored_summary() == "One answer could not be checked again, and is kept as it was."
    doc["answers"][q.id]["text"] = {"text": "\n\n", "tokens": "char"}  # no line the quiz could have read
    again, outcome = recheck(doc, new_context)
    assert again["answers"] == {} and outcome.left_out == 1
