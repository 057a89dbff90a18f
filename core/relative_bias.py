"""T5's relative positions: a learned bias on the attention scores instead of a position added to the tokens.

Each (query, key) pair falls into a bucket by the key's offset from the query
(core.positions.relative_position_bucket); each bucket holds one learned number per head. The layers
(core/model.py) add the bias to their scores.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .positions import relative_position_bucket
from .recording import Recorder, record


class RelativePositionBias(nn.Module):
    """T5's relative positions: one learned number per (bucket, head), added to the scores of every layer of a
    stack. The table sits in the stack's first layer; a key's bucket depends only on its offset from the query.

    ``bidirectional`` (the encoder) buckets keys before and after the query apart; the decoder's self-attention
    is causal, so all its buckets go to keys at or before the query.
    """

    def __init__(self, nhead: int, buckets: int = 32, max_distance: int = 128, bidirectional: bool = True,
                 device=None):
        super().__init__()
        self.buckets, self.max_distance, self.bidirectional = buckets, max_distance, bidirectional
        self.table = nn.Embedding(buckets, nhead, device=device)  # (relative_buckets, nhead)

    def forward(self, L: int, S: int, start: int = 0, device=None, rec: Recorder | None = None,
                prefix: str = "") -> Tensor:
        """The bias (nhead, L, S) for queries at start .. start + L - 1 and keys at 0 .. S - 1."""
        query = torch.arange(start, start + L, device=device)[:, None]  # (L, 1)
        key = torch.arange(S, device=device)[None, :]  # (1, S)
        bucket = relative_position_bucket(key - query, self.bidirectional, self.buckets,
                                          self.max_distance)  # (L, S)
        record(rec, prefix + "relative_buckets", bucket)
        bias = self.table(bucket).permute(2, 0, 1)  # (L, S, nhead) -> (nhead, L, S)
        return record(rec, prefix + "relative_bias", bias)
