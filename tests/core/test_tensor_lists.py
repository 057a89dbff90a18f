"""A tensor as plain lists: every number JSON-able, a mask's bools kept, a masked score's -inf as None."""

import json

import torch

from core.tensor_lists import plain_values


def test_numbers_bools_and_infinity_become_json():
    scores = torch.tensor([[0.5, float("-inf")], [1.0, 2.0]])
    assert plain_values(scores) == [[0.5, None], [1.0, 2.0]]
    assert plain_values(torch.tensor([[False, True]])) == [[False, True]]
    assert json.loads(json.dumps(plain_values(scores))) == [[0.5, None], [1.0, 2.0]]


def test_a_scalar_is_a_number():
    assert plain_values(torch.tensor(3)) == 3
