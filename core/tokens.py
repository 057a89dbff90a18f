"""A learner's own text as token ids: two tokenizers, a vocabulary built from the text itself.

The vocabulary is the text's distinct tokens, sorted, numbered from 1; id 0 is the start token the
decoder reads first ("outputs shifted right"), so vocab_size = distinct tokens + 1. Both tokenizers
keep every character (spaces and punctuation too), so joining the tokens gives the text back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LEVELS = ("word", "char")
START_ID = 0
START_TOKEN = "<start>"
MAX_TOKENS = 512  # per sequence: longer lines are cut, and ``cut`` says so
MAX_LINES = 64  # one sequence per line; N's slider stops here too


def split(text: str, level: str) -> list[str]:
    """The text's tokens at ``level``: "word" splits at word boundaries, "char" at every character."""
    if level == "word":
        return [t for t in re.split(r"\b", text) if t]
    if level == "char":
        return list(text)
    raise ValueError(f"tokenizer={level!r} must be one of {', '.join(LEVELS)}")


@dataclass(frozen=True)
class TokenizedText:
    """The text's sequences (one per non-empty line) as tokens, and the vocabulary they share.

    ``target`` holds the target text's sequences when the learner typed one, else None.
    """

    level: str
    source: tuple[tuple[str, ...], ...]
    target: tuple[tuple[str, ...], ...] | None
    vocab: tuple[str, ...]  # vocab[i - 1] is the token of id i
    cut: bool  # True when a line was longer than MAX_TOKENS or there were more than MAX_LINES lines

    @property
    def vocab_size(self) -> int:
        return len(self.vocab) + 1

    def ids(self, tokens: tuple[str, ...]) -> list[int]:
        index = {t: i for i, t in enumerate(self.vocab, start=1)}
        return [index[t] for t in tokens]

    def token(self, token_id: int) -> str:
        """The token an id stands for; id 0 is the start token."""
        return START_TOKEN if token_id == START_ID else self.vocab[token_id - 1]

    @property
    def N(self) -> int:
        return len(self.source)

    @property
    def M(self) -> int:
        return max(len(s) for s in self.source)

    @property
    def M_target(self) -> int:
        return max(len(s) for s in self.target) if self.target is not None else self.M

    def decoder_input(self) -> list[list[str]]:
        """What the decoder reads: the target (or the source again) shifted right behind the start token."""
        target = self.target if self.target is not None else self.source
        return [[START_TOKEN, *seq[:-1]] for seq in target]


def _sequences(text: str, level: str) -> tuple[tuple[tuple[str, ...], ...], bool]:
    lines = [line for line in text.split("\n") if line]
    cut = len(lines) > MAX_LINES
    out = []
    for line in lines[:MAX_LINES]:
        tokens = split(line, level)
        cut = cut or len(tokens) > MAX_TOKENS
        out.append(tuple(tokens[:MAX_TOKENS]))
    return tuple(out), cut


def tokenize(text: str, level: str = "word", target_text: str | None = None) -> TokenizedText:
    """Split the text (and a target text, if given) into sequences and number their tokens.

    Raises ValueError, with a message for the learner, for an unknown level or a text with no tokens.
    """
    if level not in LEVELS:
        raise ValueError(f"tokenizer={level!r} must be one of {', '.join(LEVELS)}")
    source, cut = _sequences(text, level)
    if not source:
        raise ValueError("the text has no tokens: type at least one character")
    target = None
    if target_text is not None:
        target, target_cut = _sequences(target_text, level)
        if not target:
            raise ValueError("the target text has no tokens: type at least one character, or leave it out")
        cut = cut or target_cut
    distinct = {t for seq in source + (target or ()) for t in seq}
    return TokenizedText(level=level, source=source, target=target, vocab=tuple(sorted(distinct)), cut=cut)
