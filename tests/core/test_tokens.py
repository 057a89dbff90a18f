"""The two tokenizers of a learner's own text: exact splits, round trips, and the vocabulary's ids."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.tokens import MAX_LINES, MAX_TOKENS, START_ID, START_TOKEN, split, tokenize


def test_the_issue_example_has_11_word_tokens_and_vocab_size_7():
    text = tokenize("the cat sat on the mat", "word")
    assert text.source == (("the", " ", "cat", " ", "sat", " ", "on", " ", "the", " ", "mat"),)
    assert (text.N, text.M, text.vocab_size) == (1, 11, 7)
    assert text.vocab == (" ", "cat", "mat", "on", "sat", "the")
    assert text.ids(text.source[0])[:3] == [6, 1, 2]


def test_character_level_keeps_every_character():
    text = tokenize("abba!", "char")
    assert text.source == (("a", "b", "b", "a", "!"),)
    assert text.vocab_size == 4  # a, b, ! and the start token


@given(st.text())
@pytest.mark.parametrize("level", ["word", "char"])
def test_tokens_join_back_to_the_text(level, text):
    assert "".join(split(text, level)) == text


@given(st.text(min_size=1).filter(lambda t: t.replace("\n", "")))
def test_ids_are_one_to_one_and_zero_is_the_start_token(text):
    tok = tokenize(text, "char")
    for seq in tok.source:
        ids = tok.ids(seq)
        assert START_ID not in ids
        assert [tok.token(i) for i in ids] == list(seq)
    assert tok.token(START_ID) == START_TOKEN
    assert tok.vocab_size == len(set(text.replace("\n", ""))) + 1


def test_one_sequence_per_line_and_the_decoder_reads_it_shifted_right():
    tok = tokenize("ab\n\nabc", "char")
    assert (tok.N, tok.M) == (2, 3)
    assert tok.decoder_input() == [[START_TOKEN, "a"], [START_TOKEN, "a", "b"]]
    typed = tokenize("ab", "char", target_text="xyz")
    assert typed.M_target == 3 and typed.decoder_input() == [[START_TOKEN, "x", "y"]]
    assert typed.vocab_size == 6


def test_long_text_is_cut_and_says_so():
    tok = tokenize("a" * (MAX_TOKENS + 10), "char")
    assert tok.M == MAX_TOKENS and tok.cut
    many = tokenize("\n".join("x" * 3 for _ in range(MAX_LINES + 1)), "char")
    assert many.N == MAX_LINES and many.cut
    assert not tokenize("short", "char").cut


@pytest.mark.parametrize("text, level, words", [("", "word", "no tokens"), ("\n\n", "char", "no tokens"),
                                                 ("hi", "bytes", "tokenizer='bytes'")])
def test_bad_input_gets_a_message(text, level, words):
    with pytest.raises(ValueError, match=words):
        tokenize(text, level)


def test_a_target_text_needs_one_line_per_line_of_the_text():
    with pytest.raises(ValueError, match="the target text has 1 line and the text 2"):
        tokenize("ab\ncd", "char", target_text="xy")
