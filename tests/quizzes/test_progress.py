"""Progress records, scores, and an import that refuses garbage with a message."""

import json

import pytest

from quizzes import BY_ID, QUESTIONS, TOPICS
from quizzes.progress import FORMAT, dumps, load_progress, missed, new_progress, record, scores

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


def test_latest_attempt_counts_and_unknown_ids_are_skipped():
    q = QUESTIONS[3]
    p = record(record(new_progress(), q.id, "1", False, "2"), q.id, "2", True, "2")
    assert missed(p) == [] and p["answers"][q.id]["correct"] is True
    doc = json.loads(dumps(p))
    doc["answers"]["no-such-question"] = {"correct": True}
    loaded, message = load_progress(json.dumps(doc))
    assert set(loaded["answers"]) == {q.id} and "Skipped 1" in message
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
