"""The sliding window's band mask: which keys a query sees, with and without a cache."""

import torch

from core import model
from core.model import generate_square_subsequent_mask
from core.window import sliding_window_mask


def test_the_window_sees_the_last_window_positions_itself_included():
    mask = sliding_window_mask(5, 5, 2)  # True: blocked
    seen = [[j for j in range(5) if not mask[i, j]] for i in range(5)]
    assert seen == [[0], [0, 1], [1, 2], [2, 3], [3, 4]]
    assert torch.equal(sliding_window_mask(4, 4, 4), generate_square_subsequent_mask(4))  # a wide window is causal
    cached = sliding_window_mask(1, 3, 3)  # one new query after a full rolling buffer of 2
    assert cached.tolist() == [[False, False, False]]


def test_the_model_module_still_offers_the_mask():
    assert model.sliding_window_mask is sliding_window_mask
