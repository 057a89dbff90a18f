"""What makes a trace cheap — the weight initialisation, the malloc tuning — and the training lab's
background import, checked exactly. The shape rules that keep shape-only passes and quiz evidence
free of that import are in test_shape_rules.py."""

import math
import sys

import pytest
import torch

import core.model as model_module
from core import Transformer, TransformerConfig
from core.model import LayerNorm, Linear, TokenEmbedding, init_weights
from tests.fresh_python import fresh_python


def build(seed=0, **sizes):
    sizes = {"vocab_size": 50, "E": 16, "nhead": 2, "layers": 2, **sizes}
    return init_weights(Transformer(**sizes), seed)


def test_every_weight_lies_in_pytorchs_default_range():
    model = build(E=24, nhead=4, d_ff=40, positional="learned")
    for module in model.modules():
        if isinstance(module, Linear):
            bound = 1 / math.sqrt(module.in_features)
            assert module.weight.abs().max() <= bound and module.bias.abs().max() <= bound
            assert module.weight.abs().max() > 0.9 * bound  # the whole range is used, not a corner
        elif isinstance(module, LayerNorm):
            assert torch.equal(module.weight, torch.ones_like(module.weight))
            assert torch.equal(module.bias, torch.zeros_like(module.bias))


def test_each_weight_is_one_of_65536_evenly_spaced_values():
    """16 random bits per weight: multiples of bound / 2^15 in [-bound, bound)."""
    layer = build(E=64, nhead=4).encoder[0].ffn.linear1
    bound = 1 / math.sqrt(64)
    steps = layer.weight.double() * 2**15 / bound
    assert torch.allclose(steps, steps.round(), atol=1e-3)
    assert steps.min() >= -2**15 and steps.max() < 2**15
    # 16,384 draws from 65,536 levels give about 14,500 distinct values, not a handful
    assert len(steps.round().unique()) > layer.weight.numel() // 2


def test_embeddings_have_unit_size_after_the_sqrt_E_scale():
    """The table is drawn with spread 1/sqrt(E) so that the embedding step, which multiplies by sqrt(E)
    (paper, section 3.4), hands on vectors of spread 1, the size of the positional encodings added to them."""
    model = build(vocab_size=4000, E=64, nhead=4)
    table = model.src_embed.lookup.weight  # (vocab_size, E)
    assert abs(table.std().item() * math.sqrt(64) - 1) < 0.02
    assert abs(table.mean().item()) < 0.01
    tokens = torch.arange(4000).view(40, 100)  # (N, L): every id once
    scaled = model.src_embed(tokens)  # (N, L, E)
    assert torch.equal(scaled, table[tokens] * 8.0)  # the step itself scales, by sqrt(64)
    assert abs(scaled.std().item() - 1) < 0.02
    positions = build(E=32, positional="learned", max_len=2000).positional.table.weight
    assert abs(positions.std().item() - 1) < 0.03


def test_seeded_same_seed_same_weights_other_seed_other_weights():
    a, b, c = build(seed=3), build(seed=3), build(seed=4)
    for pa, pb, pc in zip(a.parameters(), b.parameters(), c.parameters()):
        assert torch.equal(pa, pb)
        if pa.numel() > 1 and pa.std() > 0:
            assert not torch.equal(pa, pc)


def test_values_do_not_depend_on_the_threads_that_drew_them(monkeypatch):
    """A many-chunk model is drawn on two threads; drawing every chunk inline gives the same values."""
    monkeypatch.setattr(model_module, "CHUNK_NUMEL", 1000)  # dozens of chunks for this small model
    threaded = build(seed=5, E=32, nhead=4)

    class Inline:
        def submit(self, fn, *args):
            fn(*args)
            return type("Done", (), {"result": lambda self: None})()

    monkeypatch.setattr(model_module, "_INIT_POOL", Inline())
    inline = build(seed=5, E=32, nhead=4)
    for p, q in zip(threaded.parameters(), inline.parameters()):
        assert torch.equal(p, q)


def test_tied_embeddings_stay_one_tensor():
    model = build(tie_embeddings=True)
    assert model.generator.weight is model.tgt_embed.lookup.weight is model.src_embed.lookup.weight
    assert isinstance(model.src_embed, TokenEmbedding)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tuning is for glibc on Linux")
def test_malloc_tuning_is_on_by_default_and_can_be_turned_off():
    assert fresh_python("import core; print(core.MALLOC_TUNED)") == "True"
    assert fresh_python("import core; print(core.MALLOC_TUNED)", TSE_MALLOC_TUNING="0") == "False"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tuning is for glibc on Linux")
def test_malloc_tuning_stops_repeated_traces_faulting_their_memory_in_again():
    """What the tuning is for, counted rather than timed: page faults per repeated trace."""
    code = (
        "import resource, core\n"
        "cfg = core.TransformerConfig(N=4, M=64, E=128, nhead=8, vocab_size=4000, layers=4)\n"
        "core.trace(cfg)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "for _ in range(3):\n"
        "    core.trace(cfg)\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) // 3)\n"
    )
    # With F.linear only: oneDNN's long-lived cache entries (core/onednn.py) sit among the freed blocks and
    # keep glibc from trimming much even untuned (1,622 faults a trace here, against 5,670 without them;
    # tuned, 319 and 338), which would make this a test of the heap's layout rather than of the tuning.
    tuned = int(fresh_python(code, TSE_ONEDNN="0"))
    untuned = int(fresh_python(code, TSE_MALLOC_TUNING="0", TSE_ONEDNN="0"))
    assert tuned * 5 < untuned, (tuned, untuned)


def test_trace_values_are_finite_and_probabilities_sum_to_one():
    t = __import__("core").trace(TransformerConfig(N=3, M=6, E=16, nhead=4, vocab_size=40))
    probs = t.tensors["probs"]
    assert torch.isfinite(probs).all()
    assert torch.allclose(probs.sum(-1), torch.ones(probs.shape[:-1]))


def test_optimizer_warm_up_imports_torch_dynamo_once_and_adam_needs_it():
    """The training lab's background import: making the first Adam optimizer would otherwise pay it
    (about 1 s)."""
    out = fresh_python(
        "import sys, core\n"
        "from core.train import warm_up_in_background\n"
        "core.trace(core.PRESETS['GPT-3 175B sizes (shape only)'])\n"
        "before = 'torch._dynamo' in sys.modules\n"
        "thread = warm_up_in_background()\n"
        "thread.join(120)\n"
        "print(before, 'torch._dynamo' in sys.modules, warm_up_in_background() is thread)\n"
    )
    assert out == "False True True"
    adam = fresh_python(
        "import sys, torch\n"
        "w = torch.zeros(2, requires_grad=True)\n"
        "before = 'torch._dynamo' in sys.modules\n"
        "opt = torch.optim.Adam([w])\n"
        "print(before, 'torch._dynamo' in sys.modules)\n"
    )
    assert adam == "False True"  # if PyTorch stops needing it, the warm-up can go


def module_state(model: torch.nn.Module) -> list:
    """Everything nn.Module keeps for a model: each module's kind, plain attributes, parameters (by
    identity of shared ones), buffers and children, in order."""
    ids: dict[int, int] = {}
    state = []
    for name, module in model.named_modules(remove_duplicate=False):
        plain = {k: v for k, v in vars(module).items() if not k.startswith("_") and k != "training"}
        state.append((name, type(module).__name__, plain, module.training,
                      [(k, None if p is None else (tuple(p.shape), ids.setdefault(id(p), len(ids))))
                       for k, p in module._parameters.items()],
                      list(module._buffers), list(module._modules)))
    return state


@pytest.mark.parametrize("sizes", [dict(), dict(tie_embeddings=True, positional="learned", layers=3)])
def test_the_quick_attribute_set_builds_what_nn_modules_own_builds(monkeypatch, sizes):
    """Box.__setattr__ skips nn.Module's checks for new names; the model it builds must be the one
    nn.Module.__setattr__ builds, tied weights included."""
    quick = Transformer(vocab_size=50, E=16, nhead=2, **sizes)
    monkeypatch.setattr(model_module.Box, "__setattr__", torch.nn.Module.__setattr__)
    plain = Transformer(vocab_size=50, E=16, nhead=2, **sizes)
    assert module_state(quick) == module_state(plain)
    assert list(quick.state_dict()) == list(plain.state_dict())


def test_the_quick_attribute_set_keeps_nn_modules_rules():
    """Names nn.Module already tracks, tensors, and global registration hooks take nn.Module's own path."""
    from torch.nn.modules.module import register_module_parameter_registration_hook

    layer = Linear(3, 2)
    layer.bias = None  # a tracked parameter set to None stays a (None) parameter
    assert "bias" in layer._parameters and layer._parameters["bias"] is None and "bias" not in vars(layer)
    ffn = model_module.FeedForward(4, 8)
    with pytest.raises(TypeError, match="child module"):
        ffn.linear1 = 5  # a submodule's name cannot take a plain value
    ffn.register_buffer("scale", torch.ones(1))
    ffn.scale = torch.zeros(1)  # a tensor set on a buffer's name replaces the buffer
    assert torch.equal(ffn._buffers["scale"], torch.zeros(1))
    ffn.note = "plain"  # a new plain value is an ordinary attribute
    assert vars(ffn)["note"] == "plain"
    seen = []
    handle = register_module_parameter_registration_hook(lambda module, name, p: seen.append(name))
    try:
        Linear(3, 2)
    finally:
        handle.remove()
    assert seen == ["weight", "bias"]
    with pytest.raises(AttributeError, match="before Module.__init__"):
        model_module.Box.__new__(model_module.Box).weight = torch.nn.Parameter(torch.ones(1))
