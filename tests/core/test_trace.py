"""Every recorded shape equals its formula, for real and meta passes alike."""

import torch
from hypothesis import given, settings, strategies as st

from core import EXTRAS, ROWS, TransformerConfig, formula_shape, trace


@st.composite
def small_configs(draw):
    nhead = draw(st.integers(1, 4))
    d_k = draw(st.integers(1, 6))
    M = draw(st.integers(1, 9))
    return TransformerConfig(
        N=draw(st.integers(1, 3)), M=M, M_target=draw(st.integers(1, 9)), E=nhead * d_k, nhead=nhead,
        vocab_size=draw(st.integers(2, 40)), layers=draw(st.integers(1, 3)), d_ff=draw(st.integers(1, 24)),
        positional=draw(st.sampled_from(["sinusoidal", "learned"])), tie_embeddings=draw(st.booleans()),
        seed=draw(st.integers(0, 5)),
    )


@settings(max_examples=60, deadline=None)
@given(small_configs())
def test_live_shapes_match_their_formulas(cfg):
    t = trace(cfg)
    assert not t.shape_only
    assert [r.index for r in t.rows] == list(range(1, 15))
    for row in t.rows + t.extras:
        assert row.shape == formula_shape(row.formula, cfg), row.name
        assert row.numel == torch.Size(row.shape).numel()


def test_rows_follow_the_seed_note_order_and_formulas():
    assert [(r.index, r.formula) for r in ROWS] == [
        (1, "(N, M)"), (2, "(N, M, E)"), (3, "(M, E)"), (4, "(N, M, E)"), (5, "(N, M, E/nhead)"),
        (6, "(N, nhead, M, M)"), (7, "(N, M, E/nhead)"), (8, "(N, M, E)"), (9, "(N, M, E)"), (10, "(N, M, E)"),
        (11, "(N, M, E)"), (12, "(N, M_target, E)"), (13, "(N, M_target, E)"), (14, "(N, M_target, vocab_size)"),
    ]
    assert len({r.key for r in ROWS + EXTRAS}) == len(ROWS + EXTRAS)


def test_cross_attention_when_target_and_source_lengths_differ():
    cfg = TransformerConfig(N=2, M=7, M_target=3, E=12, nhead=3, vocab_size=20)
    t = trace(cfg)
    assert t.row("cross_scores").shape == (2, 3, 3, 7)
    assert t.row("decoder_self_scores").shape == (2, 3, 3, 3)
    assert t.row("causal_mask").shape == (3, 3)
    assert t.row("key_padding_mask").shape == (2, 7)
    assert t.row("output_probabilities").shape == (2, 3, 20)


def test_values_are_what_the_rows_claim():
    cfg = TransformerConfig(N=2, M=8, E=16, nhead=4, vocab_size=30)
    t = trace(cfg)
    tensors = t.tensors
    probs = tensors["probs"]
    torch.testing.assert_close(probs.sum(-1), torch.ones(2, 8))
    weights = tensors["enc.0.self_attn.weights"]
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 4, 8))
    # The padded keys (last quarter of the last sequence) get no attention at all.
    assert torch.all(weights[-1, :, :, 6:] == 0)
    masked = tensors["dec.0.self_attn.weights"]
    assert torch.all(masked.triu(1) == 0)  # nothing above the diagonal
    assert torch.all(masked.diagonal(dim1=-2, dim2=-1) > 0)  # the diagonal stays visible
    torch.testing.assert_close(tensors["src.sum"], tensors["src.embed"] + tensors["src.pos"])
    # The stacked layout and the note's per-head view are the same numbers.
    q = tensors["enc.0.self_attn.q"]
    W_Q = tensors["enc.0.self_attn.W_Q"][1]  # (E, d_k) of head 1
    x = tensors["src.sum"]
    bias = q[:, 1] - x @ W_Q
    torch.testing.assert_close(bias, bias[:1, :1].expand_as(bias))  # what is left is the head's bias


def test_meta_and_real_passes_give_identical_shapes():
    for cfg in [TransformerConfig(N=3, M=33, M_target=17, E=64, nhead=8, vocab_size=500, layers=3),
                TransformerConfig(N=2, M=20, E=48, nhead=6, d_ff=100, vocab_size=97, positional="learned",
                                  tie_embeddings=True)]:
        real, meta = trace(cfg, shape_only=False), trace(cfg, shape_only=True)
        assert meta.shape_only and not real.shape_only
        assert meta.shapes == real.shapes
        assert [r.shape for r in meta.rows + meta.extras] == [r.shape for r in real.rows + real.extras]
        assert meta.params == real.params
        assert meta.tensors == {}


def test_trace_is_deterministic_for_a_seed():
    cfg = TransformerConfig(seed=3)
    a, b = trace(cfg).tensors, trace(cfg).tensors
    torch.testing.assert_close(a["probs"], b["probs"])
    c = trace(cfg.replace(seed=4)).tensors
    assert not torch.equal(a["probs"], c["probs"])


def test_every_row_points_at_the_code_that_makes_it():
    t = trace(TransformerConfig())
    for row in t.rows:
        assert row.code.startswith("# core/model.py"), row.name
        assert "record(rec" in row.code


def test_the_code_shown_for_a_row_is_python_as_written_in_the_model():
    """The explorer shows these lines under 'Read a row whole'. Row 14's read 'if rec is not None:'
    with the record call under it at the same level, and row 9's began with the tail of the method's
    signature: neither was Python, and the first misstated when the probabilities are recorded."""
    import ast
    import inspect

    from core import model

    source = inspect.getsource(model)
    t = trace(TransformerConfig())
    for row in t.rows + t.extras:
        if not row.code:
            continue
        header, _, body = row.code.partition("\n")
        ast.parse(body)  # a SyntaxError names the row's broken snippet
        first = body.splitlines()[0]
        assert not first.startswith((" ", "rec:", ")")), (row.name, first)
        line = int(header.rsplit(" ", 1)[1])  # '# core/model.py, Transformer.forward, line 371'
        assert source.splitlines()[line - 1].strip() == first.strip(), row.name
    probs = t.row("output_probabilities").code
    assert "if rec is not None:\n    record(rec, \"probs\"" in probs


def test_each_attention_kinds_weights_have_a_row_of_their_shape():
    """The attention page names the shape of the kind on show when a pass is shape-only: the row it reads
    (core.views.weights_row) must hold that kind's layer-0 weights, as a real pass records them."""
    from core.views import ATTENTION_KINDS, weights_row

    t = trace(TransformerConfig(N=2, M=5, M_target=3, E=8, nhead=2, vocab_size=20))
    for kind, (stack, block) in ATTENTION_KINDS.items():
        assert t.row(weights_row(kind)).shape == tuple(t.tensors[f"{stack}.0.{block}.weights"].shape), kind
