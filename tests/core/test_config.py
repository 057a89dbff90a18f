"""TransformerConfig: defaults, derived values, and a clear ValueError for every bad value."""

import dataclasses

import pytest

from core import PRESETS, TransformerConfig, divisors
from core import trace
from core.config import MAX_E, MAX_LAYERS, MAX_M, MAX_N, MAX_NHEAD, MAX_TENSOR_BYTES, MAX_VOCAB_SIZE


def test_defaults_and_derived_values():
    cfg = TransformerConfig(N=2, M=8, E=16, nhead=2, vocab_size=100)
    assert (cfg.M_target, cfg.d_ff, cfg.d_k, cfg.layers, cfg.max_len) == (8, 64, 8, 2, 8)
    assert TransformerConfig(M=5, M_target=9).max_len == 9


def test_frozen_and_keyword_only():
    cfg = TransformerConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.E = 32  # type: ignore[misc]
    with pytest.raises(TypeError):
        TransformerConfig(2, 8)  # type: ignore[misc]


def test_nhead_that_does_not_divide_E_lists_the_divisors():
    with pytest.raises(ValueError) as err:
        TransformerConfig(E=10, nhead=4)
    message = str(err.value)
    assert "nhead=4" in message and "E=10" in message
    assert "1, 2, 5, 10" in message


@pytest.mark.parametrize("field, value, words", [
    ("N", 0, "N=0"), ("N", MAX_N + 1, f"N={MAX_N + 1}"), ("M", -3, "M=-3"), ("M", MAX_M + 1, "M="),
    ("E", 0, "E=0"), ("E", MAX_E + 1, "E="), ("nhead", 0, "nhead=0"), ("nhead", MAX_NHEAD + 1, "nhead="),
    ("vocab_size", 1, "vocab_size=1"), ("vocab_size", MAX_VOCAB_SIZE + 1, "vocab_size="),
    ("M_target", 0, "M_target=0"), ("layers", 0, "layers=0"), ("layers", MAX_LAYERS + 1, "layers="),
    ("d_ff", 0, "d_ff=0"), ("max_len", 0, "max_len=0"), ("seed", -1, "seed=-1"),
    ("positional", "rotary", "positional='rotary'"), ("tie_embeddings", "yes", "tie_embeddings='yes'"),
    ("E", "16", "E='16'"), ("N", 2.5, "N=2.5"), ("N", True, "N=True"),
    ("arch", "gpt", "arch='gpt' must be one of encoder-decoder, decoder-only, encoder-only"),
    ("norm", "batchnorm", "norm='batchnorm' must be one of layernorm, rmsnorm"),
    ("activation", "tanh", "activation='tanh' must be one of relu, gelu, swiglu"),
    ("norm_first", 1, "norm_first=1 must be True or False"), ("bias", "no", "bias='no' must be True or False"),
    ("nhead_kv", 0, "nhead_kv=0 is out of range: it must be between 1 and 2"),
    ("nhead_kv", 3, "nhead_kv=3 is out of range: it must be between 1 and 2; at most nhead=2"),
    ("nhead_kv", 1.0, "nhead_kv=1.0 must be a whole number"),
])
def test_every_bad_value_raises_a_message_naming_it(field, value, words):
    values = {"E": 16, "nhead": 2} | {field: value}
    with pytest.raises(ValueError) as err:
        TransformerConfig(**values)
    assert words in str(err.value)


def test_an_attention_map_too_large_for_pytorch_is_refused_with_the_longest_length_that_fits():
    """Each field within its limit, N=4096, nhead=1024 and M=2**20 made a map of 2**64 bytes, and the
    trace stopped in PyTorch ("Storage size calculation overflowed"). The config refuses it, and the
    length it names as the most is the most: one more is refused, and a trace at it runs (shape only)."""
    with pytest.raises(ValueError) as err:
        TransformerConfig(N=MAX_N, M=MAX_M, E=MAX_E, nhead=MAX_NHEAD)
    message = str(err.value)
    assert message.startswith("N=4096, nhead=1024 and M=1048576 make each attention map N × nhead × M × M = ")
    assert message.endswith("at N=4096 and nhead=1024, M can be at most 741,455")
    assert 4096 * 1024 * 741_455**2 * 4 <= MAX_TENSOR_BYTES < 4096 * 1024 * 741_456**2 * 4
    with pytest.raises(ValueError, match="M_target can be at most 741,455"):
        TransformerConfig(N=MAX_N, M=8, M_target=741_456, E=MAX_E, nhead=MAX_NHEAD)
    largest = TransformerConfig(N=MAX_N, M=8, M_target=741_455, E=MAX_E, nhead=MAX_NHEAD)
    t = trace(largest)
    assert t.shape_only
    assert t.row("decoder_self_scores").shape == (4096, 1024, 741_455, 741_455)


def test_divisors():
    assert divisors(12) == [1, 2, 3, 4, 6, 12]
    assert divisors(0) == []


def test_presets_are_named_for_what_they_hold():
    """The sidebar shows only a preset's name: every size it states (E=512, 6+6 layers) is the config's,
    and one it calls shape only is over the memory budget, so the explorer really has no values for it."""
    import re

    from core import DEFAULT_BUDGET_BYTES, estimate

    assert len(PRESETS) >= 7 and all(name.strip() for name in PRESETS)
    stated = 0
    for name, cfg in PRESETS.items():
        assert isinstance(cfg, TransformerConfig), name
        for field_name, value in re.findall(r"\b(N|M|E|nhead)=(\d+)", name):
            assert getattr(cfg, field_name) == int(value), name
            stated += 1
        for encoder, decoder in re.findall(r"(\d+)\+(\d+) layers", name):
            assert cfg.layers == int(encoder) == int(decoder), name
            stated += 1
        assert ("(shape only)" in name) <= estimate(cfg).over(DEFAULT_BUDGET_BYTES), name
    assert stated >= 8
    assert not any("sizes" in name for name in PRESETS)  # one entry per real model, none at a model's borrowed widths


def test_replace_recomputes_derived_defaults_unless_pinned():
    cfg = TransformerConfig(M=8, E=16)
    moved = cfg.replace(M=12, E=32)
    assert (moved.M_target, moved.d_ff, moved.max_len) == (12, 128, 12)
    pinned = TransformerConfig(M=8, M_target=3, E=16, d_ff=10).replace(M=12, E=32)
    assert (pinned.M_target, pinned.d_ff) == (3, 10)


def test_round_trip_through_dict():
    cfg = TransformerConfig(N=3, M=5, M_target=7, E=12, nhead=3, positional="learned", tie_embeddings=True)
    assert TransformerConfig.from_dict(cfg.to_dict() | {"unknown": 1}) == cfg


def test_new_fields_default_to_the_papers_model():
    cfg = TransformerConfig(E=16, nhead=4)
    assert (cfg.arch, cfg.norm_first, cfg.norm, cfg.activation, cfg.positional, cfg.nhead_kv, cfg.bias) == (
        "encoder-decoder", False, "layernorm", "relu", "sinusoidal", 4, True)
    assert cfg.replace(nhead=2).nhead_kv == 2  # follows nhead unless pinned
    assert TransformerConfig(E=16, nhead=4, nhead_kv=2).replace(M=3).nhead_kv == 2


def test_nhead_kv_that_does_not_divide_nhead_lists_the_divisors():
    with pytest.raises(ValueError) as err:
        TransformerConfig(E=24, nhead=6, nhead_kv=4)
    assert "nhead_kv=4 must divide nhead=6" in str(err.value) and "try one of 1, 2, 3, 6" in str(err.value)


def test_rope_needs_an_even_d_k_and_names_the_head_counts_that_give_one():
    with pytest.raises(ValueError) as err:
        TransformerConfig(E=12, nhead=4, positional="rope")
    message = str(err.value)
    assert "positional='rope'" in message and "d_k = E/nhead = 12/4 = 3 is odd" in message
    assert "Try nhead one of 1, 2, 3, 6" in message
    for nhead in (1, 2, 3, 6):
        assert TransformerConfig(E=12, nhead=nhead, positional="rope").d_k % 2 == 0


@pytest.mark.parametrize("arch", ["decoder-only", "encoder-only"])
def test_a_single_stack_has_no_target_length(arch):
    cfg = TransformerConfig(arch=arch, M=5)
    assert cfg.M_target is None and cfg.max_len == 5
    with pytest.raises(ValueError, match=f"M_target=5 is given for arch='{arch}'.*leave M_target out"):
        TransformerConfig(arch=arch, M=5, M_target=5)
    assert TransformerConfig(M=6).replace(arch=arch).M_target is None  # a default target length follows
    assert cfg.replace(arch="encoder-decoder").M_target == 5
    assert TransformerConfig.from_dict(cfg.to_dict()) == cfg


def test_a_pinned_target_length_blocks_a_switch_to_one_stack():
    with pytest.raises(ValueError, match="M_target=3"):
        TransformerConfig(M=8, M_target=3).replace(arch="decoder-only")


def test_a_file_name_tells_families_and_kv_heads_apart():
    from core.config import file_name_sizes

    assert file_name_sizes(TransformerConfig()) == "N2_M8_Mtarget8_E16_nhead2_vocab100_layers2_dff64"
    assert file_name_sizes(TransformerConfig(arch="decoder-only", nhead_kv=1)) == (
        "decoder-only_N2_M8_E16_nhead2_kv1_vocab100_layers2_dff64")


def test_the_real_models_are_presets_named_plainly_with_their_published_parts():
    """GPT-2 and GPT-3: one decoder stack, pre-norm LayerNorm, GELU, learned positions, tied embeddings.
    Llama-2: one decoder stack, pre-norm RMSNorm, SwiGLU, RoPE, no biases, untied; 70B shares 8 K/V heads."""
    from core.config import GPT2_SMALL, GPT3, LLAMA2_7B, LLAMA2_70B

    assert {name: PRESETS[name] for name in ("GPT-2 small", "Llama-2-7B", "Llama-2-70B", "GPT-3")} == \
        {"GPT-2 small": GPT2_SMALL, "Llama-2-7B": LLAMA2_7B, "Llama-2-70B": LLAMA2_70B, "GPT-3": GPT3}
    parts = ("arch", "norm_first", "norm", "activation", "positional", "tie_embeddings", "bias")
    gpt = ("decoder-only", True, "layernorm", "gelu", "learned", True, True)
    llama = ("decoder-only", True, "rmsnorm", "swiglu", "rope", False, False)
    sizes = ("E", "nhead", "nhead_kv", "layers", "d_ff", "vocab_size", "M")
    for cfg, published, widths in [
        (GPT2_SMALL, gpt, (768, 12, 12, 12, 3072, 50257, 1024)),
        (GPT3, gpt, (12288, 96, 96, 96, 49152, 50257, 2048)),
        (LLAMA2_7B, llama, (4096, 32, 32, 32, 11008, 32000, 4096)),
        (LLAMA2_70B, llama, (8192, 64, 8, 80, 28672, 32000, 4096)),
    ]:
        assert tuple(getattr(cfg, p) for p in parts) == published, cfg
        assert tuple(getattr(cfg, s) for s in sizes) == widths, cfg


def test_each_family_has_a_tiny_preset_whose_numbers_can_be_read():
    from core import DEFAULT_BUDGET_BYTES, estimate

    tiny = {name: cfg for name, cfg in PRESETS.items() if name.startswith("Tiny")}
    assert {cfg.arch for cfg in tiny.values()} == {"decoder-only", "encoder-only", "encoder-decoder"}
    assert any(cfg.nhead_kv < cfg.nhead and cfg.positional == "rope" and cfg.norm == "rmsnorm"
               and cfg.activation == "swiglu" for cfg in tiny.values())  # Llama's parts, small
    # And the new parts, each named: experts, latent attention, T5's relative positions.
    assert [name for name, cfg in tiny.items() if cfg.moe] == ["Tiny MoE (8 experts, top 2)"]
    assert [name for name, cfg in tiny.items() if cfg.attention == "mla"] == ["Tiny MLA (latent attention)"]
    assert [name for name, cfg in tiny.items() if cfg.positional == "relative"] == ["Tiny T5 (relative positions)"]
    for name, cfg in tiny.items():
        assert cfg.arch in name or any(family in name for family in ("Llama", "MoE", "MLA", "T5")), name
        assert cfg.E <= 16 and cfg.M <= 8 and not estimate(cfg).over(DEFAULT_BUDGET_BYTES), name
