"""Marking an imported progress file again, rather than taking it at its word.

A progress file is text that anyone can edit, so ``"correct": true`` proves nothing: every imported
answer is checked as the quiz's Check would check it, against the live model at the config it was
answered with, and its "correct" and "expected" are replaced by what that check says.

An answer names the config it was answered with. When the file names none the quiz could have run
(missing, invalid, or off the sliders), the answer is checked at the default config, the one the app
opens with, and recorded as answered there; the note says how many were. Nothing is dropped for it:
a file whose answers keep no config still loads.

An answer on the learner's own text (the "Your text" topic) is checked on the text it kept, at the
sizes that text sets, as the quiz checked it; one kept without its text is checked on the example
text, as the quiz checks it without one. One whose text was too
long to keep cannot be checked again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core import DEFAULT, TransformerConfig
from core.tokens import TokenizedText, text_config, tokenize

from .bank import BY_ID
from .check import format_answer, mark
from .progress import reads_text
from .questions import Context


@dataclass(frozen=True)
class Rechecked:
    """What marking a file again changed: answers it called right that are wrong, and the reverse
    (an answer marked by an older version of the checker, say); answers whose config could not be
    used, checked at the default one; answers left out, as their expected value failed to compute."""

    checked: int
    now_wrong: int
    now_right: int
    at_default: int
    left_out: int

    def restored_summary(self) -> str:
        """What marking again changed in answers restored from the browser's own copy; empty when nothing
        did. Written by the app itself, that copy needs no account of how it was checked, only of what
        changed: a checker fixed since the answer was marked, say, or an edit made in the browser's storage."""
        said = []
        if self.now_wrong or self.now_right:
            said.append("Checked again against the model" + _changes(self.now_wrong, self.now_right, "this browser")
                        + ".")
        if self.left_out:
            said.append("One answer could not be checked again, and is kept as it was." if self.left_out == 1 else
                        f"{self.left_out} answers could not be checked again, and are kept as they were.")
        return " ".join(said)

    def summary(self) -> str:
        """One or two sentences for the import's note; empty when there is nothing to add."""
        if not self.checked and not self.left_out:
            return ""
        said = []
        if self.checked:
            said.append("Each answer was checked again against the model at the config it was answered with"
                        + _changes(self.now_wrong, self.now_right) + ".")
        if self.at_default:
            said.append(("One of them names no config the sliders can show, so it was" if self.at_default == 1 else
                         f"{self.at_default} of them name no config the sliders can show, so they were")
                        + " checked at the default config.")
        if self.left_out:
            said.append("One answer could not be checked, and was left out." if self.left_out == 1 else
                        f"{self.left_out} answers could not be checked, and were left out.")
        return " ".join(said)


def _changes(now_wrong: int, now_right: int, source: str = "the file") -> str:
    """': 2 that the file marked right are wrong, and are marked so here', or '' when none changed."""
    def verb(n: int) -> str:
        return "is" if n == 1 else "are"

    parts = ([f"{now_wrong} that {source} marked right {verb(now_wrong)} wrong"] if now_wrong else []) + (
        [f"{now_right} that {'it' if now_wrong else source} marked wrong {verb(now_right)} right"]
        if now_right else [])
    return f": {' and '.join(parts)}, and {verb(now_wrong + now_right)} marked so here" if parts else ""


def file_config(entry: Mapping[str, Any]) -> TransformerConfig | None:
    """The config an entry names, if it is a valid one; None otherwise (never raises)."""
    try:
        config = entry.get("config")
        return TransformerConfig.from_dict(config) if isinstance(config, dict) else None
    except (TypeError, ValueError):
        return None


def answered_text(qid: str, entry: Mapping[str, Any]) -> TokenizedText | None:
    """The learner's text an answer was given on, tokenized as the quiz did; None when it kept none (a
    question that does not read the text, or a file that keeps no text). Raises ValueError when
    the text was too long to keep, or is no text the quiz could have read."""
    kept = entry.get("text")
    if kept is None or not reads_text(qid):
        return None
    if "omitted" in kept:
        raise ValueError(f"the text of the answer to {qid} was too long to keep")
    return tokenize(kept["text"], kept["tokens"], kept.get("target"))


def new_context(cfg: TransformerConfig, text: TokenizedText | None = None) -> Context:
    """A Context of its own for ``cfg`` and ``text``, for callers without the app's cached ones."""
    return Context(cfg, text=text)


def recheck(progress: dict[str, Any],
            context_for: Callable[[TransformerConfig, TokenizedText | None], Context] = new_context,
            config_of: Callable[[Mapping[str, Any]], TransformerConfig | None] = file_config,
            keep: bool = False) -> tuple[dict[str, Any], Rechecked]:
    """``progress`` (as ``load_progress`` read it) with every answer marked again; and what changed.

    ``context_for(cfg, text)`` gives the Context to check in (the app passes its cached one, so answers
    at one config and text share one trace and its experiments). ``config_of(entry)`` gives the config an
    entry was answered with, or None when the quiz could not have run it (the app refuses configs
    off its sliders, as its links do); such an entry is checked, and recorded, at DEFAULT. An answer
    whose expected value cannot be computed, or whose question is not about that config's model, is left
    out: nothing in the file is kept unchecked. With ``keep``, for the browser's own copy, which the app
    wrote, it is kept as it was instead: a learner's answers are not dropped because one experiment failed
    once.

    An answer on a kept text is checked at ``text_config(cfg, text)``, the sizes that text sets (what the
    quiz's config was), and recorded there; one whose text cannot be used (too long to keep) is left out.
    """
    answers: dict[str, Any] = {}
    contexts: dict[tuple[TransformerConfig, TokenizedText | None], Context] = {}
    now_wrong = now_right = at_default = left_out = 0
    for qid, entry in progress.get("answers", {}).items():
        q = BY_ID[qid]
        cfg = config_of(entry)
        if cfg is None:
            cfg, entry = DEFAULT, {**entry, "config": DEFAULT.to_dict()}
            at_default += q.parametric  # the answer to any other question is the same at every config
        try:
            text = answered_text(qid, entry)
            sized = cfg if text is None else text_config(cfg, text)
            if sized != cfg:  # the file's sizes are not the text's
                cfg, entry = sized, {**entry, "config": sized.to_dict()}
            if not q.applies(cfg):  # a question about another family's model has no answer there: left out
                raise ValueError(f"question {qid} does not apply to that config's model")
            if (cfg, text) not in contexts:
                contexts[cfg, text] = context_for(cfg, text)
            right, expected = mark(q, contexts[cfg, text], entry["given"])
        except Exception:  # noqa: BLE001 - an experiment that fails here must not stop the import
            left_out += 1
            if keep:
                answers[qid] = progress["answers"][qid]
            continue
        now_wrong += entry["correct"] and not right
        now_right += right and not entry["correct"]
        answers[qid] = {**entry, "correct": right, "expected": format_answer(q, expected)}
    checked = len(answers) - (left_out if keep else 0)  # a kept answer was not checked
    outcome = Rechecked(checked=checked, now_wrong=now_wrong, now_right=now_right, at_default=at_default,
                        left_out=left_out)
    return {**progress, "answers": answers}, outcome
