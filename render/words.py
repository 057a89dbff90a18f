"""Counts in words, as the learner reads them: "1 token", "3 tokens", never "1 tokens" or "token(s)"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` with its noun, singular at 1, with thousands separators: '1 token', '1,024 tokens', '2 queries'."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
