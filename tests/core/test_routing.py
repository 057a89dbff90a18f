"""core.routing: the router's weights, choices and counts read off a real pass; only the even share after a
shape-only one."""

import pytest
import torch

from core import trace
from core.config import DEFAULT, TINY_MOE
from core.routing import routing_view


def test_the_view_is_the_routers_softmax_and_its_recorded_choices():
    t = trace(TINY_MOE)
    v = routing_view(t, item=1)
    logits = t.tensors["dec.1.ffn.router_logits"][1]  # (M, n_experts): layer 1 is the first with experts
    torch.testing.assert_close(torch.tensor(v.probs), torch.softmax(logits, dim=-1))
    assert v.chosen == t.tensors["dec.1.ffn.top_k_experts"][1].tolist()
    assert all(probs.index(max(probs)) == chosen[0] for probs, chosen in zip(v.probs, v.chosen))
    assert v.counts == t.tensors["dec.1.ffn.tokens_per_expert"].tolist() and sum(v.counts) == 2 * 8 * 2
    assert (v.layer, v.item, v.rows, v.columns, v.even_share, v.known) == (1, 1, 8, 8, 4.0, True)


def test_the_view_is_capped():
    v = routing_view(trace(TINY_MOE), max_tokens=3, max_experts=5)
    assert (v.rows, v.columns, v.tokens, v.n_experts) == (3, 5, 8, 8)
    assert len(v.chosen) == 3 and len(v.counts) == 8


def test_a_shape_only_pass_knows_only_the_even_share():
    v = routing_view(trace(TINY_MOE, shape_only=True))
    assert not v.known and v.probs is None and v.rows == 0 and v.even_share == 2 * 8 * 2 / 8


def test_bad_requests_say_why():
    with pytest.raises(ValueError, match="n_experts=0"):
        routing_view(trace(DEFAULT))
    with pytest.raises(ValueError, match="item=2 must be a sequence of the batch, 0 to 1"):
        routing_view(trace(TINY_MOE), item=2)
