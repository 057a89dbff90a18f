"""A learner's progress: plain JSON-able dicts, so it can live in st.session_state and be downloaded.

Shape: {"format": FORMAT, "version": 1, "answers": {question id: {"topic", "given", "correct",
"expected", "at", "config", "text"}}, "reset_at"}. ``load_progress`` reads an uploaded file defensively:
anything malformed is refused with a message, and the caller keeps what it had.

``text`` keeps, for an answer on the learner's own text (the "Your text" topic only), that text in the
link's words, {"text", "tokens", "target"}: the answer is then marked again on it, not on the example.
A text too long to keep is replaced by TEXT_OMITTED, and such an answer cannot be marked again.

``at`` (when an answer was checked) and ``reset_at`` (when the progress was last reset or
replaced), both in milliseconds since 1970, let ``merge`` combine two tabs' progress into the
browser's one copy, so the tab that writes last loses no answers of the other's. Both are optional:
an answer without ``at`` counts as oldest.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection
from typing import Any

from core.tokens import LEVELS, TokenizedText
from render.words import counted as in_words

from .bank import BY_ID, TOPICS
from .topics.your_text import TOPIC as TEXT_TOPIC

FORMAT = "transformer-shape-explorer/quiz-progress"
VERSION = 1
MAX_UPLOAD_BYTES = 1_000_000
MAX_TEXT = 500
MAX_KEPT_TEXT = 4_000  # characters of a learner's text (and target) an answer keeps, so a file stays small
TEXT_OMITTED = {"omitted": f"the text was longer than {MAX_KEPT_TEXT} characters"}


def counted(n: int, noun: str = "answer") -> str:
    """'1 answer', '3 answers': the progress notes count answers, in the pages' words (render.words)."""
    return in_words(n, noun)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def new_progress(reset_at: int | None = None) -> dict[str, Any]:
    """Empty progress; ``reset_at`` marks a reset, which a merge carries to the other tabs."""
    progress: dict[str, Any] = {"format": FORMAT, "version": VERSION, "answers": {}}
    if reset_at is not None:
        progress["reset_at"] = int(reset_at)
    return progress


def record(progress: dict[str, Any], qid: str, given: str, correct: bool, expected: str,
           config: dict[str, Any] | None = None, at: int | None = None,
           text: TokenizedText | None = None) -> dict[str, Any]:
    """A copy of ``progress`` with this attempt stored (the latest attempt per question counts).

    ``config`` (the config's plain dict) says which model the expected answer was computed for;
    ``at`` is when, in milliseconds (now, by default); ``text`` is the learner's text the quiz had,
    kept only by a question whose answer reads it (reads_text).
    """
    answers = dict(progress.get("answers", {}))
    answers[qid] = {"topic": BY_ID[qid].topic, "given": str(given)[:MAX_TEXT], "correct": bool(correct),
                    "expected": str(expected)[:MAX_TEXT], "at": now_ms() if at is None else int(at)}
    if config is not None:
        answers[qid]["config"] = _plain_config(config)
    if text is not None and reads_text(qid):
        answers[qid]["text"] = kept_text(text)
    return {**progress, "answers": answers}


def reads_text(qid: str) -> bool:
    """Whether a question's answer is computed from the learner's text: the "Your text" topic's are."""
    return BY_ID[qid].topic == TEXT_TOPIC


def kept_text(text: TokenizedText) -> dict[str, str]:
    """The text as an answer keeps it: the lines the quiz read, each its tokens joined (which give the line
    back at either level, after any cut), or TEXT_OMITTED when that is longer than MAX_KEPT_TEXT."""
    source = "\n".join("".join(line) for line in text.source)
    target = None if text.target is None else "\n".join("".join(line) for line in text.target)
    if len(source) + len(target or "") > MAX_KEPT_TEXT:
        return dict(TEXT_OMITTED)
    return {"text": source, "tokens": text.level} | ({} if target is None else {"target": target})


def merge(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """Two copies of one learner's progress (this tab's, and what another tab left in the browser)
    as one: the later reset wins, and per question the later attempt (this tab's on a tie).
    Answers checked before the later reset are dropped, wherever they were given."""
    reset_at = max(mine.get("reset_at", 0), theirs.get("reset_at", 0))
    answers: dict[str, Any] = {}
    for source in (theirs, mine):  # mine second: it wins ties
        for qid, entry in source.get("answers", {}).items():
            at = entry.get("at", 0)
            if at >= reset_at and (qid not in answers or at >= answers[qid].get("at", 0)):
                answers[qid] = entry
    merged = {**mine, "answers": {qid: answers[qid] for qid in BY_ID if qid in answers}}
    if reset_at:
        merged["reset_at"] = reset_at
    return merged


def restamped(progress: dict[str, Any], at: int) -> dict[str, Any]:
    """Progress that replaces everything before ``at`` (an import): every answer is stamped ``at``,
    and the reset at ``at`` drops what other tabs hold from before it."""
    answers = {qid: {**entry, "at": at} for qid, entry in progress.get("answers", {}).items()}
    return {**progress, "answers": answers, "reset_at": at}


def _stamp(value: Any) -> int | None:
    """A time in milliseconds as stored, or None if it is not one (bool is not, though it is an int)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53 else None


def _plain_config(config: Any) -> dict[str, Any] | None:
    """Keep a stored config only if it is a small mapping of plain values (it is only displayed)."""
    if not isinstance(config, dict) or len(config) > 64:  # the config has a few dozen fields; a file may not have more
        return None
    clean = {str(k)[:32]: v for k, v in config.items()
             if isinstance(v, (int, str, bool)) and not (isinstance(v, str) and len(v) > 20)}
    return clean or None


def _plain_text(kept: Any) -> dict[str, str] | None:
    """Keep a stored text only if it is what kept_text writes: strings, a known level, at most
    MAX_KEPT_TEXT characters in all; or the marker of one too long to keep."""
    if not isinstance(kept, dict):
        return None
    if "omitted" in kept:
        return dict(TEXT_OMITTED)
    text, level, target = kept.get("text"), kept.get("tokens"), kept.get("target")
    if not (isinstance(text, str) and isinstance(level, str) and level in LEVELS
            and (target is None or isinstance(target, str)) and len(text) + len(target or "") <= MAX_KEPT_TEXT):
        return None
    return {"text": text, "tokens": level} | ({} if target is None else {"target": target})


def scores(progress: dict[str, Any], asked: Collection[str] | None = None) -> list[dict[str, Any]]:
    """One row per topic: questions, answered, right, wrong; over the ids ``asked`` only when given (the
    questions about the sidebar's model: answers to another family's wait for that family)."""
    answers = progress.get("answers", {})
    rows = []
    for topic in TOPICS:
        ids = [qid for qid, q in BY_ID.items() if q.topic == topic and (asked is None or qid in asked)]
        done = [answers[qid] for qid in ids if qid in answers]
        right = sum(a["correct"] for a in done)
        rows.append({"topic": topic, "questions": len(ids), "answered": len(done), "right": right,
                     "wrong": len(done) - right})
    return rows


def missed(progress: dict[str, Any]) -> list[str]:
    """Ids of the questions whose latest attempt was wrong, in bank order."""
    answers = progress.get("answers", {})
    return [qid for qid in BY_ID if qid in answers and not answers[qid]["correct"]]


def dumps(progress: dict[str, Any]) -> str:
    return json.dumps(progress, indent=2, sort_keys=True)


def load_progress(data: bytes | str) -> tuple[dict[str, Any] | None, str]:
    """Parse a progress file (uploaded, pasted or kept by the browser).

    Returns (progress, "") or (None, a message saying what is wrong).

    Unknown question ids (from another version of the bank) are skipped, and the message says how many.
    """
    try:
        if isinstance(data, bytes):
            if len(data) > MAX_UPLOAD_BYTES:
                return None, (f"The file is {len(data)} bytes; a progress file is far smaller "
                              f"(limit {MAX_UPLOAD_BYTES}).")
            # As json.loads would read bytes: UTF-8, with or without the byte-order mark that some
            # editors (Windows Notepad among them) write at the start, or UTF-16 or UTF-32.
            data = data.decode(json.detect_encoding(data))
        elif len(data) > MAX_UPLOAD_BYTES:  # pasted, or read back from the browser's storage
            return None, (f"The text is {len(data)} characters; a progress file is far smaller "
                          f"(limit {MAX_UPLOAD_BYTES}).")
        doc = json.loads(data.removeprefix("\ufeff"))  # a pasted text may keep a file's mark
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return None, f"This is not a JSON progress file ({type(exc).__name__}: {str(exc)[:120]})."
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return None, f"This JSON is not a quiz progress file: it needs \"format\": \"{FORMAT}\"."
    if doc.get("version") != VERSION:
        return None, f"Progress file version {str(doc.get('version'))[:20]!r} is not supported (expected {VERSION})."
    answers = doc.get("answers")
    if not isinstance(answers, dict):
        return None, "The progress file's \"answers\" must be an object keyed by question id."
    clean, skipped = {}, 0
    for qid, entry in answers.items():
        if qid not in BY_ID:
            skipped += 1
            continue
        if not (isinstance(entry, dict) and isinstance(entry.get("correct"), bool)
                and isinstance(entry.get("given", ""), str) and isinstance(entry.get("expected", ""), str)):
            return None, f"The entry for question {qid!r} is malformed: it needs a true/false \"correct\"."
        clean[qid] = {"topic": BY_ID[qid].topic, "given": entry.get("given", "")[:MAX_TEXT],
                      "correct": entry["correct"], "expected": entry.get("expected", "")[:MAX_TEXT]}
        config = _plain_config(entry.get("config"))
        if config:
            clean[qid]["config"] = config
        text = _plain_text(entry.get("text")) if reads_text(qid) else None
        if text:
            clean[qid]["text"] = text
        if _stamp(entry.get("at")) is not None:
            clean[qid]["at"] = entry["at"]
    note = f"Skipped {counted(skipped)} to questions this version does not have." if skipped else ""
    progress = {"format": FORMAT, "version": VERSION, "answers": clean}
    if _stamp(doc.get("reset_at")) is not None:
        progress["reset_at"] = doc["reset_at"]
    return progress, note
