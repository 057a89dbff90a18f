"""core.shape_rules against PyTorch's own meta kernels: same shape, strides and dtype, or no answer."""

import pytest
import torch
from hypothesis import given, settings, strategies as st

from core import PRESETS, TransformerConfig, trace
from core.shape_rules import RULES, _broadcast
from core.shapes import MetaShapeCache
from tests.fresh_python import fresh_python

aten = torch.ops.aten


def meta(*shape, dtype=torch.float32):
    return torch.empty(shape, dtype=dtype, device="meta")


def layout(t):
    """Shape, dtype and the strides that mean something: a size-1 dimension's stride is arbitrary
    (PyTorch's own meta and CPU kernels disagree on it) and no view or index depends on it.
    Several outputs give a list of layouts."""
    if isinstance(t, (tuple, list)):
        return [layout(x) for x in t]
    return tuple(t.shape), tuple(st for size, st in zip(t.shape, t.stride()) if size > 1), t.dtype


def check(op, *args, covered=True, **kwargs):
    """The rule's answer has PyTorch's layout; ``covered`` says the rule must answer at all."""
    ours = RULES[op](*args, **kwargs)
    theirs = op(*args, **kwargs)
    if covered:
        assert ours is not None, (op, args)
    if ours is not None:
        assert layout(ours) == layout(theirs), (op, args)
        assert all(t.device.type == "meta" for t in (ours if isinstance(ours, tuple) else (ours,)))
    return ours


shapes = st.lists(st.integers(1, 5), min_size=1, max_size=4)


def broadcastable(draw_shape, draw):
    """A shape that broadcasts against ``draw_shape``: a suffix with some sizes set to 1."""
    keep = draw(st.integers(0, len(draw_shape)))
    suffix = draw_shape[len(draw_shape) - keep:]
    return [1 if draw(st.booleans()) else s for s in suffix]


@settings(max_examples=80, deadline=None)
@given(shape=shapes, data=st.data(), op=st.sampled_from([aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor,
                                                           aten.div.Tensor]))
def test_binary_operators_broadcast_like_pytorch(shape, data, op):
    other = broadcastable(shape, data.draw)
    a, b = meta(*shape), meta(*other)
    check(op, a, b)
    check(op, b, a)
    check(op, a, 2.5)
    check(op, meta(*shape, dtype=torch.int64), meta(*other), covered=op is not aten.div.Tensor)


def test_operands_that_broadcast_each_other_like_pytorch():
    """As attention_bias adds a causal (L, S) mask to an (N, 1, 1, S) padding mask."""
    for a, b in [((1, 3), (3, 1)), ((2, 1, 4), (3, 1)), ((5, 7), (2, 1, 1, 7)), ((1,), (4, 1, 2))]:
        check(aten.add.Tensor, meta(*a), meta(*b))
        check(aten.add.Tensor, meta(*b), meta(*a))


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=2, max_size=4), data=st.data(),
       op=st.sampled_from([aten.exp.default, aten.sin.default, aten.cos.default, aten.relu.default]))
def test_unary_operators_keep_a_permuted_layout_like_pytorch(shape, data, op):
    x = meta(*shape)
    check(op, x)
    dims = data.draw(st.permutations(range(len(shape))))
    permuted = x.permute(*dims)  # a dense, transposed layout, as q is before the scale
    check(op, permuted)
    check(aten.div.Tensor, permuted, 3.0)
    check(aten.mul.Scalar, permuted, 0.5)
    check(op, x[..., ::2], covered=False)  # a slice with gaps: see the next test


@settings(max_examples=120, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), data=st.data(),
       op=st.sampled_from([aten.exp.default, aten.relu.default, aten.div.Tensor, aten.mul.Scalar]))
def test_elementwise_operators_lay_out_a_slice_as_pytorch_does(shape, data, op):
    """A slice with gaps, such as q split off the stacked (N, L, 3E) projection, transposed: the
    output is dense, its dims in the slice's order of strides, on the meta device and on the CPU."""
    wide = [size + data.draw(st.integers(0, 3)) for size in shape]  # room for the slice's gaps
    order = data.draw(st.permutations(range(len(shape))))
    cuts = [torch.empty(wide, device=device).permute(*order)[tuple(slice(0, shape[d]) for d in order)]
            for device in ("meta", "cpu")]
    on_meta, on_cpu = [(cut,) if op in (aten.exp.default, aten.relu.default) else (cut, 2.0) for cut in cuts]
    ours = check(op, *on_meta, covered=True)
    assert layout(ours) == layout(op(*on_cpu)), (op, tuple(cuts[1].shape), cuts[1].stride())


def test_the_rules_decline_what_pytorch_refuses_and_pytorch_then_says_why():
    cases = [
        (aten.add.Tensor, (meta(2, 3), meta(4, 3))),
        (aten.linear.default, (meta(2, 5), meta(4, 3), meta(4))),
        (aten.bmm.default, (meta(2, 3, 4), meta(2, 5, 6))),
        (aten.layer_norm.default, (meta(2, 3), [4])),
        (aten.stack.default, ([meta(2, 3), meta(3, 2)],)),
        (aten.arange.start_step, (5, 0, 1)),
        (aten.add_.Tensor, (meta(3), meta(2, 3))),
        (aten.masked_fill_.Scalar, (meta(3), meta(2, 3, dtype=torch.bool), 0.0)),
    ]
    for op, args in cases:
        kwargs = {"device": "meta"} if op is aten.arange.start_step else {}
        assert RULES[op](*args, **kwargs) is None, op
        with pytest.raises(RuntimeError), MetaShapeCache():
            op(*args, **kwargs)


@settings(max_examples=40, deadline=None)
@given(lead=st.lists(st.integers(1, 4), min_size=0, max_size=3), n_in=st.integers(1, 6), n_out=st.integers(1, 6),
       bias=st.booleans())
def test_linear_like_pytorch(lead, n_in, n_out, bias):
    check(aten.linear.default, meta(*lead, n_in), meta(n_out, n_in), meta(n_out) if bias else None)


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data(), n_out=st.integers(1, 5),
       bias=st.booleans())
def test_linear_of_a_permuted_slice_like_pytorch(shape, data, n_out, bias):
    """A non-contiguous input, such as the heads put back together when d_k = 1: the output is
    contiguous all the same, on the meta device and on the CPU."""
    wide = [size + data.draw(st.integers(0, 2)) for size in shape]
    order = data.draw(st.permutations(range(len(shape))))
    n_in = shape[order[-1]]
    args = [(torch.empty(wide, device=device).permute(*order)[tuple(slice(0, shape[d]) for d in order)],
             torch.empty(n_out, n_in, device=device), torch.empty(n_out, device=device) if bias else None)
            for device in ("meta", "cpu")]
    ours = check(aten.linear.default, *args[0])
    assert layout(ours) == layout(aten.linear.default(*args[1]))


def test_a_shape_only_pass_with_one_wide_heads_imports_neither_dynamo_nor_sympy():
    """d_k = 1: the heads put back together are a view, not contiguous, on their way to W^O."""
    out = fresh_python(
        "import sys, core\n"
        "t = core.trace(core.TransformerConfig(N=3, M=2, M_target=7, E=8, nhead=8), shape_only=True)\n"
        "print(t.shape_only, 'torch._dynamo' in sys.modules, 'sympy' in sys.modules)\n"
    )
    assert out == "True False False"


@settings(max_examples=40, deadline=None)
@given(B=st.integers(1, 4), n=st.integers(1, 5), m=st.integers(1, 5), p=st.integers(1, 5))
def test_bmm_like_pytorch_even_with_a_transposed_operand(B, n, m, p):
    check(aten.bmm.default, meta(B, n, m), meta(B, m, p))
    check(aten.bmm.default, meta(B, n, m), meta(B, p, m).transpose(1, 2))  # q @ k^T


@settings(max_examples=40, deadline=None)
@given(shape=shapes, affine=st.booleans(), dim=st.integers(-1, 0))
def test_layer_norm_and_softmax_like_pytorch(shape, affine, dim):
    width = [shape[-1]]
    params = (meta(*width), meta(*width)) if affine else (None, None)
    check(aten.layer_norm.default, meta(*shape), width, *params, 1e-5)
    check(aten.softmax.int, meta(*shape), dim)
    check(aten.softmax.int, meta(*shape).transpose(0, -1), dim)  # softmax's output is contiguous


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 5), m=st.integers(1, 5), p=st.integers(1, 5), bias_rank=st.integers(0, 2))
def test_addmm_like_pytorch(n, m, p, bias_rank):
    bias = meta(*[(n, p), (p,), ()][2 - bias_rank])
    check(aten.addmm.default, bias, meta(n, m), meta(p, m).t())  # nn.Linear inside PyTorch's layers


@settings(max_examples=40, deadline=None)
@given(shape=shapes, affine=st.booleans(), dims=st.integers(1, 2))
def test_pytorchs_own_layer_norm_and_attention_softmax_like_pytorch(shape, affine, dims):
    normalized = shape[len(shape) - min(dims, len(shape)):]
    params = (meta(*normalized), meta(*normalized)) if affine else (None, None)
    check(aten.native_layer_norm.default, meta(*shape), normalized, *params, 1e-5)  # output, mean, 1/std
    check(aten._safe_softmax.default, meta(*shape), -1)


def test_the_remaining_rules_like_pytorch():
    check(aten.triu.default, meta(5, 5, dtype=torch.bool), 1)
    check(aten.triu.default, meta(2, 3, 4), -1)
    check(aten.eq.Scalar, meta(2, 7, dtype=torch.int64), 0)
    check(aten.stack.default, [meta(3, 4, 2)] * 5)
    check(aten.stack.default, [meta(3, 4)] * 2, -1)
    check(aten.embedding.default, meta(50, 8), meta(2, 7, dtype=torch.int64))
    for x in (meta(2, 3, 4), meta(1, 3, 4).permute(2, 0, 1), meta(3, 4).t()):
        check(aten.empty_like.default, x)
        check(aten.empty_like.default, x, dtype=torch.bool, memory_format=torch.contiguous_format)
    check(aten.empty_like.default, meta(4, 6)[:, ::2], covered=False)
    for kwargs in ({"dtype": torch.float32, "device": "meta"}, {"device": "meta"}):
        check(aten.arange.default, 7, **kwargs)
        check(aten.arange.start_step, 0, 9, 2, **kwargs)
        check(aten.arange.start_step, 3, 3, 1, **kwargs)  # empty, not an error
    for op in (aten.zeros.default, aten.ones.default):
        check(op, [3, 4], dtype=torch.bool, device="meta")
        check(op, [2], device="meta")
    x = meta(4, 1, 6, 6)
    assert check(aten.add_.Tensor, x, meta(6, 6)) is x  # in place: the very same tensor
    assert check(aten.masked_fill_.Scalar, x, meta(4, 1, 1, 6, dtype=torch.bool), float("-inf")) is x
    assert check(aten.div_.Scalar, x, 0.9) is x
    assert RULES[aten.div_.Scalar](meta(3, dtype=torch.int64), 2) is None  # PyTorch refuses an integer result


def test_rules_leave_real_tensors_to_pytorch():
    assert RULES[aten.add.Tensor](torch.ones(2), meta(2)) is None
    assert RULES[aten.zeros.default]([2, 3], dtype=torch.float32) is None  # no device: the CPU


def test_broadcast_matches_pytorch():
    for shapes in [((2, 3), (3,)), ((4, 1, 6), (5, 1)), ((), (2,)), ((0, 3), (1, 3)), ((2, 3), (4, 3))]:
        try:
            expected = tuple(torch.broadcast_shapes(*shapes))
        except RuntimeError:
            expected = None
        assert _broadcast(*shapes) == expected, shapes


def test_quiz_evidence_imports_neither_dynamo_nor_sympy():
    """The experiments that ask PyTorch's own layers about shapes do it under the rules too, so the
    app needs no background import for them (each config in its own fresh process)."""
    code = (
        "import sys, core\n"
        "from quizzes.experiments import EXPERIMENTS, run\n"
        "cfg = {cfg}\n"
        "for name in EXPERIMENTS:\n"
        "    run(name, cfg)\n"
        "    if 'torch._dynamo' in sys.modules or 'sympy' in sys.modules:\n"
        "        print(name)\n"
        "        break\n"
        "else:\n"
        "    print('none')\n"
    )
    for cfg in ("core.TransformerConfig(N=1, M=8, M_target=5000, E=16, nhead=2, vocab_size=100, max_len=6000)",
                "core.PRESETS['GPT-3 175B sizes (shape only)']"):
        assert fresh_python(code.format(cfg=cfg)) == "none", cfg


def test_a_first_shape_only_pass_imports_neither_dynamo_nor_sympy():
    """Each would cost a fresh process about a second (and torch._dynamo about 70 MiB) before the
    first shape-only trace could answer; the rules keep PyTorch's Python meta kernels out of it."""
    out = fresh_python(
        "import sys, core\n"
        "t = core.trace(core.TransformerConfig(N=64, M=2048, E=12288, nhead=96, vocab_size=50257))\n"
        "print(t.shape_only, 'torch._dynamo' in sys.modules, 'sympy' in sys.modules)\n"
    )
    assert out == "True False False"


@settings(max_examples=25, deadline=None)
@given(N=st.integers(1, 3), M=st.integers(1, 6), T=st.integers(1, 6), nhead=st.integers(1, 3), d_k=st.integers(1, 4),
       positional=st.sampled_from(["sinusoidal", "learned"]))
def test_shape_only_passes_with_the_rules_record_what_real_passes_record(N, M, T, nhead, d_k, positional):
    cfg = TransformerConfig(N=N, M=M, M_target=T, E=nhead * d_k, nhead=nhead, vocab_size=30, layers=2,
                            positional=positional)
    real, shape_only = trace(cfg, shape_only=False), trace(cfg, shape_only=True)
    assert shape_only.shapes == real.shapes


def test_the_gpt3_preset_traces_shape_only():
    t = trace(PRESETS["GPT-3 175B sizes (shape only)"])
    assert t.shape_only and t.row("output_probabilities").shape == (64, 2048, 50257)
