"""T5's relative position bias on its own: one learned number per (bucket, head), read by the key's offset."""

import torch

from core import model
from core.positions import relative_position_bucket
from core.relative_bias import RelativePositionBias


def test_the_bias_is_the_tables_row_of_each_pairs_bucket():
    torch.manual_seed(0)
    rel = RelativePositionBias(nhead=3, buckets=8, max_distance=16, bidirectional=True)
    rec = {}
    bias = rel(4, 6, start=2, rec=rec, prefix="enc.")  # (nhead, L, S)
    assert bias.shape == (3, 4, 6)
    offsets = torch.arange(6)[None, :] - torch.arange(2, 6)[:, None]  # (L, S): key - query
    bucket = relative_position_bucket(offsets, True, 8, 16)  # (L, S)
    assert torch.equal(rec["enc.relative_buckets"], bucket)
    torch.testing.assert_close(bias, rel.table.weight[bucket].permute(2, 0, 1), rtol=0, atol=0)
    assert torch.equal(rec["enc.relative_bias"], bias)  # recorded detached, the same numbers


def test_the_model_module_still_offers_the_class():
    assert model.RelativePositionBias is RelativePositionBias
