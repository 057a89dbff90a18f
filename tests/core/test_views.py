"""core.views: what the pages draw, cut from a trace (attention maps, positional tables, memory curves);
exact, tiny, seeded."""

from __future__ import annotations

import pytest
import torch

from core import TransformerConfig, trace
from core.memory import every_layer
from core.model import sinusoidal_table
from core.views import (ATTENTION_KINDS, MAX_DIMS, MAX_POSITIONS, attention_map, layer_crossover, memory_curve,
                        positional_view, shown_dims, sinusoid_curves)

CFG = TransformerConfig(N=3, M=8, M_target=6, E=12, nhead=3, vocab_size=20, layers=2)


@pytest.fixture(scope="module")
def t():
    return trace(CFG)


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_attention_map_rows_sum_to_one_and_blocked_cells_are_zero(t, kind):
    a = attention_map(t, kind, layer=1, head=2, item=2)
    weights = torch.tensor(a.weights)
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(len(a.weights)))
    blocked = torch.tensor(a.blocked)
    assert blocked.any(), "the last item is padded and the decoder is causal: something is blocked"
    assert torch.equal(weights[blocked], torch.zeros(int(blocked.sum())))
    assert a.blocked_weight_max == 0.0
    stack, block = ATTENTION_KINDS[kind]
    torch.testing.assert_close(weights, t.tensors[f"{stack}.1.{block}.weights"][2, 2])


def test_attention_map_masks_are_the_traced_ones(t):
    causal = attention_map(t, "decoder masked self-attention", item=0)
    assert causal.blocked == torch.ones(6, 6, dtype=torch.bool).triu(1).tolist()
    cross = attention_map(t, "cross-attention", item=2)
    assert (cross.queries, cross.keys) == (6, 8)
    padding = t.tensors["src_key_padding_mask"][2].tolist()  # last quarter of the last sequence
    assert padding == [False] * 6 + [True] * 2
    assert all(row == padding for row in cross.blocked)
    assert cross.key_tokens == t.tensors["src.tokens"][2].tolist()


def test_attention_map_is_capped_and_refuses_bad_input():
    long = trace(TransformerConfig(N=1, M=100, E=4, nhead=1, vocab_size=5, layers=1))
    a = attention_map(long, "encoder self-attention")
    assert (len(a.weights), len(a.weights[0]), a.queries, a.keys, a.capped) == (
        MAX_POSITIONS, MAX_POSITIONS, 100, 100, True)
    with pytest.raises(ValueError, match="head=1 is out of range"):
        attention_map(long, "encoder self-attention", head=1)
    with pytest.raises(ValueError, match="kind="):
        attention_map(long, "self")
    meta = trace(TransformerConfig(N=1, M=4, E=4, nhead=1, vocab_size=5, layers=1), shape_only=True)
    with pytest.raises(ValueError, match="shape-only"):
        attention_map(meta, "encoder self-attention")


def test_positional_views(t):
    v = positional_view(CFG, "sinusoidal")
    torch.testing.assert_close(torch.tensor(v.table), sinusoidal_table(8, 12))  # the paper's values: test_parity
    table = torch.tensor(v.table)  # (8, 12): every dimension shown at E = 12
    cosines = torch.nn.functional.cosine_similarity(table[:, None, :], table[None, :, :], dim=-1)  # (8, 8)
    torch.testing.assert_close(torch.tensor(v.similarity), cosines)
    torch.testing.assert_close(torch.tensor(v.similarity).diagonal(), torch.ones(8))
    learned_cfg = CFG.replace(positional="learned")
    lt = trace(learned_cfg)
    v = positional_view(learned_cfg, "learned", lt)
    torch.testing.assert_close(torch.tensor(v.table), lt.tensors["src.pos"])
    assert "own table" in v.note
    seeded = positional_view(CFG, "learned", t)  # the config is sinusoidal: a standalone seeded table
    assert "freshly seeded" in seeded.note and len(seeded.table) == 8
    assert positional_view(CFG, "learned").table == seeded.table  # seeded: the same every time


def test_positional_view_is_bounded_at_huge_sizes():
    huge = TransformerConfig(N=1, M=1_000_000, E=65_536, nhead=1, vocab_size=2, layers=1)
    v = positional_view(huge, "sinusoidal")
    assert v.positions == MAX_POSITIONS and len(v.dims) <= MAX_DIMS and len(v.table[0]) == len(v.dims)
    assert shown_dims(12) == list(range(12)) and shown_dims(64) == list(range(64))
    # Capped: whole (sine, cosine) pairs at a stride, never only the even (sine) dimensions.
    assert shown_dims(80) == [d for i in range(0, 40, 2) for d in (2 * i, 2 * i + 1)]
    assert shown_dims(640)[:6] == [0, 1, 20, 21, 40, 41] and len(shown_dims(640)) == 64
    for E in (65, 81, 127, 128, 12288):
        dims = shown_dims(E)
        assert len(dims) <= 64 and all(d + 1 in dims for d in dims if d % 2 == 0 and d + 1 < E)
    curves = sinusoid_curves(65_536, [0, 1, 65_535, 70_000], 10**9)
    assert sorted(curves) == [0, 1, 65_535] and len(curves[0]) == 512


def test_a_zero_vectors_cosine_similarity_is_undefined_not_zero():
    """At E = 1 the sinusoidal PE[0] is [sin 0] = [0]: normalize kept it at 0, and the heatmap showed
    position 0 as unlike itself (0, white), against the page's "most alike with itself". Its row and
    column are NaN now; every other cell is as it was, and no other table has a zero row."""
    import math

    v = positional_view(TransformerConfig(N=1, M=8, M_target=8, E=1, nhead=1, vocab_size=10), "sinusoidal")
    assert v.zero_positions == [0]
    assert all(math.isnan(v.similarity[0][j]) and math.isnan(v.similarity[j][0]) for j in range(8))
    signs = [math.copysign(1.0, math.sin(p)) for p in range(8)]  # one number each: the cosine is its sign's
    assert [row[1:] for row in v.similarity[1:]] == [[a * b for b in signs[1:]] for a in signs[1:]]
    for E in (1, 2, 3, 4, 12, 64, 640):
        cfg = TransformerConfig(N=1, M=64, M_target=64, E=E, nhead=1, vocab_size=10)
        for kind in ("sinusoidal", "learned"):
            v = positional_view(cfg, kind)
            assert v.zero_positions == ([0] if (E, kind) == (1, "sinusoidal") else []), (E, kind)
            nan = torch.tensor(v.similarity).isnan()
            assert nan.any().item() == bool(v.zero_positions), (E, kind)


def test_memory_curve_attention_overtakes_and_quadruples():
    points, crossover = memory_curve(CFG)
    assert crossover is not None
    by_M = {p.M: p for p in points}
    assert by_M[crossover].attention > by_M[crossover].linear + by_M[crossover].vocab
    below = every_layer(CFG.replace(M=crossover - 1, M_target=crossover - 1))
    assert below.attention <= below.linear + below.vocab  # the exact first M, not the next power of two
    for m in (8, 64, 1024):  # M = M_target: the attention term is exactly N*nhead*3M^2 floats per layer
        assert by_M[2 * m].attention == 4 * by_M[m].attention
        assert by_M[2 * m].params == by_M[m].params
    assert max(by_M) >= 4 * crossover


def test_memory_curve_stops_at_the_longest_M_the_config_allows():
    """The curve probed M = 2**20, core's limit, which N=4096 with nhead=1024 does not allow (the maps
    would be 2**64 bytes): it stops at the longest M that does, and still finds the exact crossover."""
    big = TransformerConfig(N=4096, M=8, E=4096, nhead=1024)
    points, crossover = memory_curve(big)
    at, below = (every_layer(big.replace(M=m, M_target=m)) for m in (crossover, crossover - 1))
    assert at.attention > at.linear + at.vocab and below.attention <= below.linear + below.vocab
    assert [p.M for p in points][-1] == 4096


def test_the_crossover_is_the_exact_first_length_not_the_next_power_of_two():
    from core import DEFAULT

    points, crossover = memory_curve(DEFAULT)
    assert crossover == 55  # 583,825 attention bytes against 575,630 for the rest; at 54 attention loses
    assert 55 in [p.M for p in points]


def test_the_crossover_is_a_fact_about_layers_not_about_how_many_the_trace_keeps():
    """One layer pair's maps outweigh its other activations from the same M whatever N and the depth
    (the formula in layer_crossover, checked against the byte counts); the whole model's crossover
    only approaches it from above as the stack deepens, since the ends of the stack weigh less."""
    from core import DEFAULT

    for cfg in (DEFAULT, CFG, DEFAULT.replace(E=512, nhead=8), DEFAULT.replace(E=24, nhead=3, d_ff=50)):
        first = layer_crossover(cfg)
        for m, wins in ((first - 1, False), (first, True)):
            for N in (1, 5):
                one = every_layer(cfg.replace(N=N, M=m, M_target=m, layers=1))
                two = every_layer(cfg.replace(N=N, M=m, M_target=m, layers=2))
                assert (two.attention - one.attention > two.linear - one.linear) is wins, (cfg, m, N)
        whole = [memory_curve(cfg.replace(layers=L))[1] for L in (1, 2, 6, 12)]
        assert whole == sorted(whole, reverse=True) and whole[-1] >= first, (whole, first)
    assert layer_crossover(DEFAULT) == 43  # (12 * 16 + 64) / (3 * 2) = 42.7


def test_the_most_alike_pair_is_two_different_positions_with_a_defined_similarity():
    """The positional page's sentence about a table's likeness: the highest similarity off the diagonal
    (every position scores 1 with itself), leaving out undefined (NaN) ones; None with no pair left."""
    from core.views import PositionalView, most_alike_pair

    nan = float("nan")

    def view(similarity):
        n = len(similarity)
        return PositionalView(kind="learned", positions=n, dims=[0], table=[[0.0]] * n, similarity=similarity,
                              note="", zero_positions=[])

    assert most_alike_pair(view([[1.0, 0.2, nan], [0.2, 1.0, -0.5], [nan, -0.5, 1.0]])) == 0.2
    assert most_alike_pair(view([[1.0, -0.9], [-0.9, 1.0]])) == -0.9
    assert most_alike_pair(view([[1.0, nan], [nan, nan]])) is None
    assert most_alike_pair(view([[1.0]])) is None
