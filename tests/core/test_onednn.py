"""core.model.linear: oneDNN's kernel for large products without gradients, F.linear for everything else,
and the same numbers either way (to float32 rounding). Which kernel ran is read off the operators
dispatched, not inferred from timings."""

import pytest
import torch
from torch.nn import functional as F

from core import Transformer, TransformerConfig, onednn, trace
from core.model import linear
from tests.fresh_python import fresh_python
from tests.op_log import ONEDNN_OP, OpLog


def large(*shape_in, out=512, bias=True, seed=0):
    """An input of ``shape_in`` and weights of ``out`` rows: rows x in x out is at least MIN_MACS."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape_in, generator=gen)
    w = torch.randn(out, shape_in[-1], generator=gen) / shape_in[-1] ** 0.5
    b = torch.randn(out, generator=gen) if bias else None
    assert x.numel() * out >= onednn.MIN_MACS
    return x, w, b


@pytest.mark.parametrize("make", [
    lambda: large(512, 256),  # (rows, in): a 2-D input
    lambda: large(4, 128, 256),  # (N, L, E), as every layer of the model gets it
    lambda: large(4, 128, 256, bias=False),
    lambda: (lambda x, w, b: (x[:, ::2], w, b))(*large(4, 256, 256)),  # a strided view: any caller may pass one
])
def test_a_large_product_without_gradients_runs_on_onednn_and_agrees_with_f_linear(kernel_on, make):
    x, w, b = make()
    with torch.inference_mode(), OpLog() as log:
        out = linear(x, w, b)  # (..., in) -> (..., out)
    assert ONEDNN_OP in log.names and "aten.addmm.default" not in log.names
    expected = F.linear(x, w, b)
    assert out.shape == expected.shape and out.dtype == torch.float32
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    with torch.no_grad(), OpLog() as log:  # no_grad is the other way to switch gradients off
        linear(x, w, b)
    assert ONEDNN_OP in log.names


def test_small_products_gradients_and_the_meta_device_take_f_linear(kernel_on):
    x, w, b = large(512, 256)
    small = x[:8]  # 8 x 256 x 512 multiply-adds, far under MIN_MACS
    with torch.inference_mode(), OpLog() as log:
        linear(small, w, b)
    assert ONEDNN_OP not in log.names

    xg = x.clone().requires_grad_()  # grad mode on: training must be able to backpropagate
    with OpLog() as log:
        out = linear(xg, w, b)
    assert ONEDNN_OP not in log.names
    out.sum().backward()
    torch.testing.assert_close(xg.grad, w.sum(0).expand_as(x))  # d(sum(x W^T + b))/dx = column sums of W

    with torch.inference_mode(), OpLog() as log:
        shape = linear(x.to("meta"), w.to("meta"), b.to("meta")).shape
    assert shape == (512, 512) and ONEDNN_OP not in log.names


def test_turned_off_every_product_is_f_linear_to_the_bit(monkeypatch):
    monkeypatch.setattr(onednn, "LINEAR", False)
    x, w, b = large(4, 128, 256)
    with torch.inference_mode(), OpLog() as log:
        out = linear(x, w, b)
    assert ONEDNN_OP not in log.names
    assert torch.equal(out, F.linear(x, w, b))


def test_a_trace_shows_the_same_numbers_with_either_kernel(kernel_on, monkeypatch):
    """What a learner sees does not depend on the kernel, beyond float32 rounding: a config whose
    large products reach oneDNN, traced with it and without."""
    cfg = TransformerConfig(N=2, M=64, M_target=48, E=256, nhead=8, vocab_size=1000, layers=2)
    with OpLog() as log:
        fast = trace(cfg)
    assert ONEDNN_OP in log.names
    monkeypatch.setattr(onednn, "LINEAR", False)
    plain = trace(cfg)
    assert fast.rows == plain.rows and fast.extras == plain.extras and fast.params == plain.params
    assert fast.tensors.keys() == plain.tensors.keys()
    for key, value in plain.tensors.items():
        torch.testing.assert_close(fast.tensors[key], value, atol=1e-5, rtol=1e-5, msg=key)


def test_training_keeps_f_linear_so_every_parameter_gets_its_gradient(kernel_on):
    """oneDNN's kernel has no backward pass; with gradients on it is never chosen, even for products
    over MIN_MACS, so a training step reaches every parameter."""
    model = Transformer(vocab_size=1000, E=256, nhead=8, layers=1)
    src = torch.randint(0, 1000, (2, 64))  # (N, M): 128 rows, so the QKV, FFN and output products are over MIN_MACS
    with OpLog() as log:
        loss = model(src, src).logsumexp(-1).mean()
    assert ONEDNN_OP not in log.names
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())


def test_importing_core_bounds_both_caches_unless_the_environment_already_does():
    code = "import os, core; print(core.onednn.LINEAR, os.environ['ONEDNN_PRIMITIVE_CACHE_CAPACITY'], " \
           "os.environ['LRU_CACHE_CAPACITY'])"
    assert fresh_python(code) == f"True {onednn.ENTRIES} {onednn.ENTRIES}"
    assert fresh_python(code, LRU_CACHE_CAPACITY="4") == f"True {onednn.ENTRIES} 4"


def test_tse_onednn_0_turns_it_off_and_leaves_the_caches_alone():
    code = "import os, core; print(core.onednn.LINEAR, os.environ.get('LRU_CACHE_CAPACITY'))"
    assert fresh_python(code, TSE_ONEDNN="0") == "False None"
