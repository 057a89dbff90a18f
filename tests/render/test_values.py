"""The value tables' builders: tokens shown safely as labels, colours by sign and size, exact numbers kept."""

from __future__ import annotations

import pytest

from render.values import (
    heat_colour,
    heat_table,
    shown_token,
    token_frame,
    token_labels,
    values_frame,
)


@pytest.mark.parametrize("token, shown", [
    (" ", "␣"), ("\n", "⏎"), ("\x07", "\\x07"), ("\u202e", "\\u202e"), ("cat", "cat"), ("<b>x</b>", "<b>x</b>"),
    ("😀", "😀"), ("שלום", "שלום"),
])
def test_a_token_is_shown_with_its_invisible_characters_escaped(token, shown):
    assert shown_token(token) == shown


def test_a_long_token_is_cut_in_its_label():
    assert len(shown_token("x" * 500)) == 24 and shown_token("x" * 500).endswith("…")


def test_labels_keep_equal_tokens_apart():
    labels = token_labels(["the", " ", "cat", " ", "the"])
    assert labels == ["0 the", "1 ␣", "2 cat", "3 ␣", "4 the"]
    assert len(set(labels)) == len(labels)


def test_token_frame_puts_each_id_beside_its_token():
    frame = token_frame(["the", " ", "cat"], [5, 1, 3])
    assert frame.to_dict("list") == {"position": [0, 1, 2], "token": ["the", "␣", "cat"], "id": [5, 1, 3]}


def test_heat_colour_is_white_at_zero_red_above_blue_below():
    assert heat_colour(0.0, 2.0) == "#ffffff"
    assert heat_colour(2.0, 2.0) == "#c8282e"
    assert heat_colour(-2.0, 2.0) == "#3163ba"
    assert heat_colour(5.0, 0.0) == "#ffffff"


def test_heat_table_keeps_the_values_and_colours_every_cell():
    values = [[0.5, -1.0], [float("-inf"), 0.25]]
    frame = values_frame(values, ["0 a", "1 b"], ["0", "1"])
    styler = heat_table(frame)
    assert styler.data.values.tolist() == values
    html = styler.to_html()
    assert "background-color: #3163ba" in html  # -1.0, the largest finite magnitude, fully blue
    assert "−∞" in html and "0.500" in html
