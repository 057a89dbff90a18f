"""Progress records, scores, and an import that refuses garbage with a message."""

import json

import pytest

from core.tokens import tokenize
from quizzes import BY_ID, QUESTIONS, TOPICS
from quizzes.progress import (FORMAT, MAX_KEPT_TEXT, TEXT_OMITTED, counted, dumps, kept_text, load_progress, merge,
                              missed, new_progress, record, restamped, scores)

GARBAGE = [
    b"", b"{", b"not json at all", b"\xff\xfe\x00", b"[]", b"null", b"42", b'"a string"',
    b'{"format": "something else", "version": 1, "answers": {}}',
    json.dumps({"format": FORMAT, "version": 99, "answers": {}}).encode(),
    json.dumps({"format": FORMAT, "version": 1, "answers": []}).encode(),
    json.dumps({"format": FORMAT, "version": 1, "answers": {QUESTIONS[0].id: "yes"}}).encode(),
    json.dumps({"format": FORMAT, "version": 1, "answers": {QUESTIONS[0].id: {"correct": "true"}}}).encode(),
    json.dumps({"format": FORMAT, "version": 1, "answers": {QUESTIONS[0].id: {"correct": True, "given": 5}}}).encode(),
    b"[" * 100_000, b"x" * 2_000_000,
]


@pytest.mark.parametrize("data", GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_is_refused_with_a_message(data):
    loaded, message = load_progress(data)
    assert loaded is None
    assert message and len(message) < 400


def test_overlong_text_is_refused_before_it_is_parsed():
    """Pasted text and the browser's stored copy arrive as str; they have the same limit as a file."""
    loaded, message = load_progress(" " * 1_000_001)
    assert loaded is None and "1000001 characters" in message


def test_round_trip_and_scores():
    qa, qb = QUESTIONS[0], QUESTIONS[-1]
    p = record(record(new_progress(), qa.id, "A", True, "x"), qb.id, "(1, 2)", False, "(2, 2)")
    loaded, message = load_progress(dumps(p).encode())
    assert message == "" and loaded == p
    rows = {r["topic"]: r for r in scores(loaded)}
    assert set(rows) == set(TOPICS)
    assert rows[qa.topic]["right"] == 1 and rows[qb.topic]["wrong"] == 1
    assert sum(r["questions"] for r in rows.values()) == len(QUESTIONS)
    assert missed(loaded) == [qb.id]


@pytest.mark.parametrize("encode", [
    lambda text: b"\xef\xbb\xbf" + text.encode(),  # UTF-8 behind a byte-order mark, as Notepad saves it
    lambda text: text.encode("utf-16"),  # Notepad's "Unicode"
    lambda text: text.encode("utf-16-le"),
    lambda text: "\ufeff" + text,  # the file's text pasted with its mark
], ids=["utf-8 with BOM", "utf-16", "utf-16-le", "pasted with BOM"])
def test_a_file_saved_again_by_an_editor_still_loads(encode):
    """A downloaded file opened and saved in an editor came back with a byte-order mark and was
    refused as "not a JSON progress file"."""
    p = record(new_progress(), QUESTIONS[0].id, "A \u2192 B", True, "A \u2192 B")  # not all ASCII
    loaded, message = load_progress(encode(dumps(p)))
    assert message == "" and loaded == p


def test_latest_attempt_counts_and_unknown_ids_are_skipped():
    q = QUESTIONS[3]
    p = record(record(new_progress(), q.id, "1", False, "2"), q.id, "2", True, "2")
    assert missed(p) == [] and p["answers"][q.id]["correct"] is True
    doc = json.loads(dumps(p))
    doc["answers"]["no-such-question"] = {"correct": True}
    loaded, message = load_progress(json.dumps(doc))
    assert set(loaded["answers"]) == {q.id} and message.startswith("Skipped 1 answer to")
    assert BY_ID[q.id].topic == loaded["answers"][q.id]["topic"]


def test_config_is_kept_only_when_plain():
    q = QUESTIONS[0]
    p = record(new_progress(), q.id, "a", True, "a", {"E": 16, "nhead": 2, "positional": "learned"})
    loaded, _ = load_progress(dumps(p))
    assert loaded["answers"][q.id]["config"] == {"E": 16, "nhead": 2, "positional": "learned"}
    doc = json.loads(dumps(p))
    doc["answers"][q.id]["config"] = {"E": [1] * 1000, "x": {"nested": 1}}
    loaded, _ = load_progress(json.dumps(doc))
    assert "config" not in loaded["answers"][q.id]


@pytest.mark.parametrize("text, level, target", [
    ("the cat sat on the mat", "word", None),
    ("Hello, world!  Tabs\there.\n\nnaïve café — 3.14\n  leading spaces", "word", None),
    ("Hello, world!\n\tx y", "char", None),
    ("le chat\nest là", "word", "the cat\nis there"),
    ("ab" * 300, "char", None),  # 600 tokens: cut at MAX_TOKENS, and kept as the quiz read it
])
def test_a_kept_text_tokenizes_back_to_the_text_the_quiz_read(text, level, target):
    tok = tokenize(text, level, target)
    kept = kept_text(tok)
    again = tokenize(kept["text"], kept["tokens"], kept.get("target"))
    assert (again.level, again.source, again.target, again.vocab) == (tok.level, tok.source, tok.target, tok.vocab)


def test_only_an_answer_on_the_text_keeps_it_and_a_long_one_is_marked_omitted():
    tok = tokenize("one two\nthree", "word", "un deux\ntrois")
    p = record(record(new_progress(), "yt-count-word", "3", True, "3", text=tok), "dk-value", "8", True, "8",
               text=tok)
    assert p["answers"]["yt-count-word"]["text"] == {"text": "one two\nthree", "tokens": "word",
                                                     "target": "un deux\ntrois"}
    assert "text" not in p["answers"]["dk-value"]  # its answer does not read the text
    loaded, note = load_progress(dumps(p))
    assert note == "" and loaded == p  # kept through an export and an import
    assert restamped(loaded, 7)["answers"]["yt-count-word"]["text"] == p["answers"]["yt-count-word"]["text"]
    assert merge(new_progress(), loaded)["answers"]["yt-count-word"]["text"] == p["answers"]["yt-count-word"]["text"]
    long = tokenize("x" * MAX_KEPT_TEXT + "\ny", "word")  # one word of 4,000 letters, and a second line
    p = record(new_progress(), "yt-count-word", "1", True, "1", text=long)
    assert p["answers"]["yt-count-word"]["text"] == TEXT_OMITTED
    assert load_progress(dumps(p))[0] == p


MALFORMED_TEXTS = ["one two", 5, None, ["one two", "word"], {"nested": {"text": "a"}},
                   {"text": "x" * (MAX_KEPT_TEXT + 1), "tokens": "word"},
                   {"text": "a" * 3000, "tokens": "word", "target": "b" * 1001},
                   {"text": 5, "tokens": "word"}, {"text": "a", "tokens": ["word"]}, {"text": "a", "tokens": "bpe"},
                   {"text": "a", "tokens": "word", "target": 3}, {"tokens": "word"}]


def test_a_malformed_kept_text_is_dropped_and_the_answer_still_loads():
    """A file is anyone's text: a "text" that is not the small object the quiz writes is dropped, as a
    config is, and its answer loads without it (marked again on the example, as an older file's)."""
    good = {"text": "one two", "tokens": "word"}
    answers = {"yt-count-word": {"correct": True, "given": "3", "expected": "3", "text": good},
               "dk-value": {"correct": True, "given": "8", "expected": "8", "text": good}}  # not a text question
    for bad in MALFORMED_TEXTS:
        doc = {"format": FORMAT, "version": 1, "answers": {
            **answers, "yt-row1": {"correct": False, "given": "(1, 2)", "expected": "(2, 3)", "text": bad}}}
        loaded, note = load_progress(json.dumps(doc))
        assert loaded is not None and note == "", bad
        assert "text" not in loaded["answers"]["yt-row1"] and loaded["answers"]["yt-row1"]["given"] == "(1, 2)", bad
        assert loaded["answers"]["yt-count-word"]["text"] == good and "text" not in loaded["answers"]["dk-value"]


def test_merge_keeps_both_tabs_answers_the_later_attempt_and_the_later_reset():
    q1, q2, q3 = (q.id for q in QUESTIONS[:3])
    a = record(record(new_progress(), q1, "a", True, "a", at=100), q2, "x", False, "y", at=300)
    b = record(record(new_progress(), q2, "y", True, "y", at=200), q3, "b", True, "b", at=250)
    both = merge(a, b)
    assert both["answers"][q1]["given"] == "a" and both["answers"][q3]["given"] == "b"
    assert both["answers"][q2]["given"] == "x"  # a's attempt at 300 is later than b's at 200
    assert merge(b, a)["answers"] == both["answers"]  # whichever tab merges
    assert merge(both, both) == both and merge(both, a) == both  # nothing new, nothing changes
    reset = new_progress(reset_at=260)
    after = merge(reset, both)
    assert set(after["answers"]) == {q2} and after["reset_at"] == 260  # only the answer after the reset stays
    assert merge(both, reset)["answers"] == after["answers"]
    old = {**b, "answers": {q2: {k: v for k, v in b["answers"][q2].items() if k != "at"}}}  # before times
    assert merge(old, a)["answers"][q2]["given"] == "x" and q2 not in merge(old, reset)["answers"]


def test_times_survive_a_round_trip_and_bad_ones_are_dropped():
    q = QUESTIONS[0].id
    p = record(new_progress(reset_at=5), q, "a", True, "a", at=123)
    loaded, _ = load_progress(dumps(p))
    assert loaded["answers"][q]["at"] == 123 and loaded["reset_at"] == 5
    for bad in (True, -1, 1.5, "123", 2**60):
        doc = {"format": FORMAT, "version": 1, "reset_at": bad,
               "answers": {q: {"correct": True, "given": "a", "expected": "a", "at": bad}}}
        loaded, _ = load_progress(json.dumps(doc))
        assert "at" not in loaded["answers"][q] and "reset_at" not in loaded, bad
    imported = restamped(loaded, 999)
    assert imported["reset_at"] == 999 and imported["answers"][q]["at"] == 999


def test_counts_are_written_in_words():
    assert [counted(n) for n in (0, 1, 2)] == ["0 answers", "1 answer", "2 answers"]
