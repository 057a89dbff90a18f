"""render.words.counted: a count and its noun, singular at 1 only, with thousands separators."""

from __future__ import annotations

import pytest

from render.words import counted


@pytest.mark.parametrize("n, words", [(1, "1 token"), (0, "0 tokens"), (2, "2 tokens"), (3, "3 tokens"),
                                      (1024, "1,024 tokens"), (1_048_576, "1,048,576 tokens")])
def test_a_count_is_singular_at_one_only(n, words):
    assert counted(n, "token") == words


def test_an_irregular_noun_takes_its_own_plural():
    assert counted(1, "query", "queries") == "1 query"
    assert counted(2, "query", "queries") == "2 queries"
    assert counted(0, "axis", "axes") == "0 axes"


def test_a_noun_of_several_words_changes_its_last():
    assert counted(1, "K/V head") == "1 K/V head"
    assert counted(8, "distinct token") == "8 distinct tokens"
