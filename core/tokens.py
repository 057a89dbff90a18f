"""A learner's own text as token ids: two tokenizers, a vocabulary built from the text itself.

The vocabulary is the text's distinct tokens, sorted, numbered from 1; id 0 is the start token the
decoder reads first ("outputs shifted right"), so vocab_size = distinct tokens + 1. Both tokenizers
keep every character (spaces and punctuation too), so joining the tokens gives the text back.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .config import TransformerConfig

LEVELS = ("word", "char")
START_ID = 0
START_TOKEN = "<start>"
MAX_TOKENS = 512  # per sequence: longer lines are cut, and ``cut`` says so
MAX_LINES = 64  # one sequence per line; N's slider stops here too
PAD_TOKEN = "<pad>"  # the label of a position past a shorter line's end


# Characters that steer how text is laid out rather than being seen: right-to-left overrides and isolates.
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def escaped(token: str) -> str:
    """A token as it may be printed: control characters and text-direction overrides written as escapes
    (a tab as \\t, ESC as \\x1b), so a token can neither be invisible nor restyle a terminal or a page."""
    out = []
    for ch in token:
        if ch in _BIDI_CONTROLS or unicodedata.category(ch) == "Cc":
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)


def split(text: str, level: str) -> list[str]:
    """The text's tokens at ``level``: "word" splits at word boundaries, "char" at every character."""
    if level == "word":
        return [t for t in re.split(r"\b", text) if t]
    if level == "char":
        return list(text)
    raise ValueError(f"tokenizer={level!r} must be one of {', '.join(LEVELS)}")


class _Sizes:
    """N, M and M_target of sequences held as ``source`` and ``target`` (tokens or ids alike)."""

    source: tuple[tuple, ...]
    target: tuple[tuple, ...] | None

    @property
    def N(self) -> int:
        return len(self.source)

    @property
    def M(self) -> int:
        return max(len(s) for s in self.source)

    @property
    def M_target(self) -> int:
        return max(len(s) for s in self.target) if self.target else self.M


@dataclass(frozen=True)
class TokenizedText(_Sizes):
    """The text's sequences (one per non-empty line) as tokens, and the vocabulary they share.

    ``target`` holds the target text's sequences when the learner typed one, else None.
    """

    level: str
    source: tuple[tuple[str, ...], ...]
    target: tuple[tuple[str, ...], ...] | None
    vocab: tuple[str, ...]  # vocab[i - 1] is the token of id i
    cut: bool  # True when a line was longer than MAX_TOKENS or there were more than MAX_LINES lines
    first_line: str = ""  # the first line as typed, whole even when it was cut: what a count of its tokens counts

    @property
    def vocab_size(self) -> int:
        return len(self.vocab) + 1

    def ids(self, tokens: tuple[str, ...]) -> list[int]:
        index = {t: i for i, t in enumerate(self.vocab, start=1)}
        return [index[t] for t in tokens]

    def token(self, token_id: int) -> str:
        """The token an id stands for; id 0 is the start token."""
        return START_TOKEN if token_id == START_ID else self.vocab[token_id - 1]

    def decoder_input(self) -> list[list[str]]:
        """What the decoder reads: the target (or the source again) shifted right behind the start token."""
        target = self.target if self.target is not None else self.source
        return [[START_TOKEN, *seq[:-1]] for seq in target]

    def labels(self) -> tuple[str, ...]:
        """Every id's token, by id: labels[0] is the start token."""
        return (START_TOKEN, *self.vocab)

    def batch(self) -> TokenBatch:
        """The text as the ids a pass reads: the source lines, and the decoder's input (shifted right)."""
        index = {t: i for i, t in enumerate(self.labels())}  # the start token is 0, the text's tokens 1, 2, ...
        return TokenBatch(source=tuple(tuple(index[t] for t in seq) for seq in self.source),
                          target=tuple(tuple(index[t] for t in seq) for seq in self.decoder_input()),
                          labels=self.labels())


@dataclass(frozen=True)
class TokenBatch(_Sizes):
    """Token ids for one pass, one tuple per sequence (not yet padded), and every id's label.

    A learner's text gives one (``TokenizedText.batch``); so does a trained task's sequence, whose
    ids are its own symbols. ``target`` is the decoder's input for an encoder-decoder.
    """

    source: tuple[tuple[int, ...], ...]
    target: tuple[tuple[int, ...], ...] | None
    labels: tuple[str, ...]  # labels[i] is the token of id i

    @property
    def vocab_size(self) -> int:
        return len(self.labels)

    def tokens(self, which: str = "source") -> tuple[tuple[str, ...], ...]:
        """Each sequence's tokens, padded to the longest with PAD_TOKEN: the labels of a value table's rows."""
        seqs = self.source if which == "source" else self.target
        width = max(len(s) for s in seqs)
        return tuple(tuple(self.labels[i] for i in s) + (PAD_TOKEN,) * (width - len(s)) for s in seqs)


def text_config(cfg: TransformerConfig, text: TokenizedText | TokenBatch) -> TransformerConfig:
    """``cfg`` with the sizes the text sets: N lines, M tokens (M_target for the encoder-decoder's target),
    vocab_size its vocabulary, and a learned positional table just long enough; every other field kept."""
    batch = text.batch() if isinstance(text, TokenizedText) else text
    sizes = {"N": batch.N, "M": batch.M, "vocab_size": batch.vocab_size}
    if cfg.arch == "encoder-decoder":
        sizes["M_target"] = batch.M_target
    if cfg.positional == "learned":
        sizes["max_len"] = max(batch.M, sizes.get("M_target", batch.M))
    return cfg.replace(**sizes)


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
        if len(target) != len(source):
            raise ValueError(f"the target text has {len(target)} line{'s' * (len(target) != 1)} and the text "
                             f"{len(source)}: give one target line for each line of the text")
        cut = cut or target_cut
    distinct = {t for seq in source + (target or ()) for t in seq}
    first_line = next(line for line in text.split("\n") if line)
    return TokenizedText(level=level, source=source, target=target, vocab=tuple(sorted(distinct)), cut=cut,
                         first_line=first_line)
