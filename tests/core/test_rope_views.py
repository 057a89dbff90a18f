"""The positional page's views (core.views): RoPE's angles are the model's own, the relative property holds, to
float32 rounding, for any query, key and positions, and a learned table is the traced model's own in every family."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core import TransformerConfig, trace
from core.positions import apply_rope, rope_angles
from core.views import MAX_ROPE_POSITION, rope_allowance, rope_relative, rope_score, rope_vectors, rope_view

ROPE = TransformerConfig(arch="decoder-only", N=2, M=8, E=32, nhead=4, nhead_kv=2, vocab_size=30, positional="rope")


def test_the_angles_are_the_models_own_table():
    """theta[p][i] = p * 10000^(-2i/d_k), the first half of core.positions.rope_angles (its second half repeats it)."""
    v = rope_view(ROPE)
    assert (v.d_k, v.positions, v.pairs) == (8, 8, [0, 1, 2, 3])
    table = rope_angles(8, 8)  # (M, d_k)
    assert torch.equal(table[:, :4], table[:, 4:])
    assert v.angles == table[:, :4].tolist()
    for p in range(8):
        for i in range(4):
            assert v.angles[p][i] == pytest.approx(p * 10000 ** (-2 * i / 8), rel=1e-6)
    assert v.rates == pytest.approx([10000 ** (-2 * i / 8) for i in range(4)], rel=1e-6)


def test_the_angles_are_capped_and_an_odd_d_k_is_refused():
    v = rope_view(TransformerConfig(M=1000, E=512, nhead=2, positional="rope"), cap=64, pair_cap=64)
    assert (v.positions, len(v.pairs), v.pairs[:3], v.pairs[-1]) == (64, 64, [0, 2, 4], 126)
    assert len(v.angles) == 64 and len(v.angles[0]) == 64
    with pytest.raises(ValueError, match="needs an even d_k; d_k = E/nhead = 3 is odd"):
        rope_view(TransformerConfig(E=6, nhead=2))


def test_the_live_vectors_are_the_models_unturned_query_and_key():
    """At position 0 RoPE turns by 0, so the first token's recorded q and k are x W^Q and x W^K as they are."""
    cfg = ROPE.replace(bias=False)  # q = x W^Q exactly, with no bias the trace does not record
    t = trace(cfg)
    q, k, source = rope_vectors(cfg, t)
    x = t.tensors["tgt.sum"][0, :1]  # (1, E): the first token of the first sequence, what post-norm layer 0 reads
    torch.testing.assert_close(q, x @ t.tensors["dec.0.self_attn.W_Q"][0])  # (1, E) @ (E, d_k) -> (1, d_k)
    torch.testing.assert_close(k, x @ t.tensors["dec.0.self_attn.W_K"][0])
    assert "live model" in source
    _, _, seeded = rope_vectors(cfg.replace(positional="sinusoidal"))
    assert "seeded random" in seeded


@pytest.mark.parametrize("i, j, s", [(0, 0, 0), (3, 1, 5), (1, 6, 2), (7, 0, 40), (100, 250, 1000)])
def test_the_shifted_score_equals_the_first_to_float32_rounding(i, j, s):
    r = rope_relative(ROPE, i, j, s, trace(ROPE))
    assert abs(r.difference) <= r.allowance
    assert r.allowance < 1e-3 * (1 + abs(r.unturned))  # a small allowance, not one that swallows anything
    q, k, _ = rope_vectors(ROPE, trace(ROPE))
    assert r.score == float(rope_score(q, k, i, j)) and r.shifted == float(rope_score(q, k, i + s, j + s))


def test_the_offset_is_what_moves_the_score():
    """Not a constant: the same q and k score differently at another offset i - j."""
    t = trace(ROPE)
    scores = {rope_relative(ROPE, i, 0, 0, t).score for i in range(5)}
    assert len(scores) == 5


def test_positions_out_of_range_are_refused():
    for args, name in [((-1, 0, 0), "i=-1"), ((0, MAX_ROPE_POSITION + 1, 0), f"j={MAX_ROPE_POSITION + 1}"),
                       ((0, 0, -3), "s=-3")]:
        with pytest.raises(ValueError, match=f"{name} is out of range"):
            rope_relative(ROPE, *args)


vectors = st.integers(1, 32).flatmap(lambda half: st.tuples(
    st.lists(st.floats(-10, 10, width=32), min_size=2 * half, max_size=2 * half),
    st.lists(st.floats(-10, 10, width=32), min_size=2 * half, max_size=2 * half)))
positions = st.integers(0, 5000)


@settings(max_examples=150, deadline=None)
@given(vectors, positions, positions, positions)
def test_relative_property_for_any_query_and_key(qk, i, j, s):
    """q.k after RoPE depends on i - j only: the score at (i + s, j + s) is the score at (i, j), within the
    float32 rounding allowance, which an exact computation in float64 confirms."""
    q, k = (torch.tensor(v).unsqueeze(0) for v in qk)  # (1, d_k) each
    score, shifted = rope_score(q, k, i, j), rope_score(q, k, i + s, j + s)
    assert abs(float(shifted) - float(score)) <= rope_allowance(q, k, i, j, s)
    # In float64 the rotation by (i - j) alone gives the same score.
    d_k = q.shape[-1]
    exact = (apply_rope(q.double(), rope_angles(1, d_k, dtype=torch.float64, start=i - j if i >= j else 0))
             * apply_rope(k.double(), rope_angles(1, d_k, dtype=torch.float64, start=0 if i >= j else j - i))).sum()
    assert math.isclose(float(score), float(exact), abs_tol=rope_allowance(q, k, i, j, 0))


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only", "encoder-only"])
def test_a_learned_table_is_the_traced_models_own_in_every_family(arch):
    from core.views import positional_view

    cfg = TransformerConfig(arch=arch, N=2, M=6, E=8, nhead=2, vocab_size=20, positional="learned")
    t = trace(cfg)
    v = positional_view(cfg, "learned", t)
    side = "tgt" if arch == "decoder-only" else "src"
    assert v.note.startswith("the traced model's own table")
    assert v.table == t.tensors[f"{side}.pos"][:6].tolist()
