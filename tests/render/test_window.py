"""render.window: which windowed and full layers the Attention page pairs, and its words for their masks."""

from __future__ import annotations

import pytest

from core.config import MISTRAL_7B, TINY_LLAMA, TINY_MLA
from render.window import full_layers_words, layer_pair, pair_caption, window_mask_note

ALTERNATING = TINY_LLAMA.replace(window=3, global_every=2, layers=4)  # layers 0 and 2 windowed, 1 and 3 full


@pytest.mark.parametrize("layer, pair", [(0, (0, 1)), (1, (0, 1)), (2, (2, 1)), (3, (2, 3))])
def test_the_layer_on_show_is_paired_with_the_nearest_layer_of_the_other_kind(layer, pair):
    assert layer_pair(ALTERNATING, layer) == pair


def test_no_pair_where_every_layer_is_alike():
    assert layer_pair(MISTRAL_7B, 0) is None  # a window in every layer
    assert layer_pair(TINY_LLAMA, 0) is None and layer_pair(TINY_MLA, 1) is None  # no window at all
    assert layer_pair(TINY_LLAMA.replace(window=3, global_every=3, layers=3), 2) == (1, 2)


def test_the_mask_notes_say_the_band_and_where_it_blocks_nothing_more():
    assert window_mask_note(ALTERNATING, 0) == (
        "Sliding-window mask, W = 3: True where blocked. Query i sees keys i − 2 to i, the last W positions, itself "
        "included: later keys are blocked, as by the causal mask, and so is every key W or more behind, which leaves "
        "a band along the diagonal. Stacked, each windowed layer reaches W − 1 = 2 positions further back: after L "
        "windowed layers, up to L · (W − 1) positions.")
    assert window_mask_note(ALTERNATING, 1) == (
        "Causal mask: True above the diagonal. Layer 1 has no window: every 2nd layer attends in full "
        "(global_every = 2: layers 1, 3), so query i sees every key 0..i, however far back.")
    wide = TINY_LLAMA.replace(window=8)
    assert window_mask_note(wide, 0).endswith(
        "Here M = 8 ≤ W = 8, so the band reaches back to key 0 for every query and blocks nothing the causal mask "
        "does not: a window below M shows the band.")
    assert full_layers_words(TINY_LLAMA.replace(window=3, global_every=2, layers=9)) == (
        "every 2nd layer attends in full (global_every = 2: layers 1, 3, 5, …)")
    assert pair_caption(ALTERNATING, 2, 3, 1, 0).startswith(
        "Head 1 of sequence 0, in layer 2 (windowed, W = 3) and in layer 3 (full: every 2nd layer")


def test_a_window_of_one_or_two_counts_its_keys_and_positions_in_the_singular():
    one = TINY_LLAMA.replace(window=1, global_every=2, layers=2)
    assert "each row's weights sit on at most its last 1 key and still sum to 1" in pair_caption(one, 0, 1, 0, 0)
    two = TINY_LLAMA.replace(window=2)  # M = 8 > W
    assert "each windowed layer reaches W − 1 = 1 position further back" in window_mask_note(two, 0)
