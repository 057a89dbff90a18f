"""Every architecture family through the app: the sidebar's Architecture group offers only valid configs, and
every page renders each family, its presets, the sliders' ends and garbage links without an exception."""

from __future__ import annotations

import pytest

from core import PRESETS, TransformerConfig
from core.config import ARCHS
from tests.support.apptest import architecture_opened, architecture_summary, make_app, open_page, running
from tests.support.links import config_link
from ui.link.config import FFS, LAYER_RANGE, LENGTHS, MAX_NHEAD_OPTION, N_RANGE, VOCABS, WIDTHS


def sidebar_parts(at) -> dict:
    """The Architecture group's widgets as the learner sees them."""
    return {key: at.sidebar.radio(key=f"w_{key}").value for key in ("arch", "norm_first", "norm", "activation",
                                                                     "positional")}


def test_the_architecture_group_holds_every_part_and_its_default_is_the_papers_model():
    at = architecture_opened(make_app()).run()
    assert not at.exception
    assert "Architecture" in [e.label for e in at.sidebar.expander]
    assert sidebar_parts(at) == {"arch": "encoder-decoder", "norm_first": False, "norm": "layernorm",
                                 "activation": "relu", "positional": "sinusoidal"}
    assert at.sidebar.radio(key="w_arch").options == ["encoder-decoder (the paper, T5)", "decoder-only (GPT, Llama)",
                                                      "encoder-only (BERT)"]
    assert at.sidebar.radio(key="w_norm_first").options == ["post-norm (the paper)", "pre-norm (GPT-2, Llama)"]
    assert at.sidebar.radio(key="w_norm").options == ["LayerNorm", "RMSNorm"]
    assert at.sidebar.radio(key="w_activation").options == ["ReLU", "GELU", "SwiGLU"]
    assert at.sidebar.radio(key="w_positional").options == ["sinusoidal", "learned", "RoPE", "none", "relative (T5)"]
    assert at.sidebar.checkbox(key="w_bias").value is True
    # nhead = 2 allows 1 or 2 K/V heads, each named beside its number.
    assert at.sidebar.select_slider(key="w_nhead_kv").options == ["1 (MQA)", "2 (MHA)"]


def test_moving_each_part_reaches_the_config_and_the_link():
    at = architecture_opened(make_app()).run()
    at.sidebar.radio(key="w_arch").set_value("decoder-only").run()
    at.sidebar.radio(key="w_norm_first").set_value(True).run()
    at.sidebar.radio(key="w_norm").set_value("rmsnorm").run()
    at.sidebar.radio(key="w_activation").set_value("swiglu").run()
    at.sidebar.radio(key="w_positional").set_value("rope").run()
    at.sidebar.select_slider(key="w_nhead_kv").set_value(1).run()
    at.sidebar.checkbox(key="w_bias").uncheck().run()
    assert not at.exception and not at.sidebar.error
    cfg = running(at)
    assert (cfg.arch, cfg.norm_first, cfg.norm, cfg.activation, cfg.positional, cfg.nhead_kv, cfg.bias) == \
        ("decoder-only", True, "rmsnorm", "swiglu", "rope", 1, False)
    assert {k: at.query_params[k] for k in ("arch", "norm_first", "norm", "activation", "positional", "nhead_kv",
                                            "bias")} == \
        {"arch": "decoder-only", "norm_first": "true", "norm": "rmsnorm", "activation": "swiglu", "positional": "rope",
         "nhead_kv": "1", "bias": "false"}
    assert at.sidebar.selectbox(key="w_preset").value == "(custom)"


def test_the_target_length_and_the_two_stacks_wording_show_for_the_encoder_decoder_only():
    at = architecture_opened(make_app({"M_target": "5"})).run()
    assert at.sidebar.select_slider(key="w_M_target").value == 5
    assert at.sidebar.slider(key="w_layers").label == "layers — encoder and decoder layers, each"
    for family, layers in [("decoder-only", "layers — decoder layers"), ("encoder-only", "layers — encoder layers")]:
        at.sidebar.radio(key="w_arch").set_value(family).run()
        assert not at.exception and not at.sidebar.error
        assert running(at).M_target is None and "M_target" not in at.query_params
        assert not [s for s in at.sidebar.select_slider if s.key == "w_M_target"]
        assert at.sidebar.slider(key="w_layers").label == layers
        assert at.sidebar.select_slider(key="w_M").label == "M — sequence length"
    at.sidebar.select_slider(key="w_M").set_value(12).run()
    at.sidebar.radio(key="w_arch").set_value("encoder-decoder").run()  # back to two stacks: a target again
    assert not at.exception
    assert running(at).M_target in (5, 12)
    assert at.sidebar.select_slider(key="w_M_target").value == running(at).M_target


def test_nhead_kv_offers_divisors_of_nhead_and_follows_it():
    at = architecture_opened(make_app({"E": "64", "nhead": "8"})).run()
    kv = at.sidebar.select_slider(key="w_nhead_kv")
    assert kv.options == ["1 (MQA)", "2 (GQA)", "4 (GQA)", "8 (MHA)"] and kv.value == 8
    at.sidebar.select_slider(key="w_nhead").set_value(16).run()  # MHA stays MHA
    assert running(at).nhead_kv == 16
    at.sidebar.select_slider(key="w_nhead_kv").set_value(4).run()
    assert any(c.value == "nhead_kv = 4 of nhead = 16: GQA, each K/V head serves 4 query heads."
               for c in at.sidebar.caption)
    at.sidebar.select_slider(key="w_nhead").set_value(2).run()  # 4 does not divide 2: the nearest divisor
    assert (running(at).nhead, running(at).nhead_kv) == (2, 2)
    at.sidebar.select_slider(key="w_nhead_kv").set_value(1).run()
    at.sidebar.select_slider(key="w_nhead").set_value(32).run()  # MQA stays MQA
    assert running(at).nhead_kv == 1
    at.sidebar.select_slider(key="w_E").set_value(13).run()  # a prime E: 13 heads now, and still one K/V head
    assert (running(at).nhead, running(at).nhead_kv) == (13, 1)
    at.sidebar.select_slider(key="w_E").set_value(1).run()  # one head: one K/V head, the only choice
    assert not at.exception and not at.sidebar.error
    assert running(at).nhead_kv == 1 and at.sidebar.select_slider(key="w_nhead_kv").disabled


def test_rope_is_offered_for_an_even_d_k_only_and_comes_back_when_d_k_is_even_again():
    at = architecture_opened(make_app({"positional": "rope", "E": "16", "nhead": "2"})).run()
    assert running(at).positional == "rope"
    at.sidebar.select_slider(key="w_E").set_value(18).run()  # d_k = 9
    assert not at.exception and not at.sidebar.error
    assert running(at).positional == "sinusoidal"
    assert "RoPE" not in at.sidebar.radio(key="w_positional").options
    assert at.sidebar.radio(key="w_positional").help.endswith(
        "RoPE is not offered now: it turns pairs of dimensions, and d_k = E/nhead = 9 is odd.")
    assert any(c.value.startswith("RoPE turns pairs of dimensions, so it needs an even d_k; d_k = E/nhead = 9 is odd")
               for c in at.sidebar.caption)
    at.sidebar.select_slider(key="w_E").set_value(20).run()  # d_k = 10
    assert running(at).positional == "rope"
    assert not any(c.value.startswith("RoPE turns") for c in at.sidebar.caption)


@pytest.mark.parametrize("name", [n for n, c in PRESETS.items() if c.arch != "encoder-decoder" or c.nhead_kv != c.nhead
                                  or c.positional == "rope"])
def test_a_family_preset_applies_exactly_and_the_sidebar_shows_its_parts(name):
    preset = PRESETS[name]
    at = architecture_opened(make_app()).run()
    at.sidebar.selectbox(key="w_preset").set_value(name).run()
    assert not at.exception and not at.sidebar.error
    assert running(at) == preset
    assert sidebar_parts(at) == {"arch": preset.arch, "norm_first": preset.norm_first, "norm": preset.norm,
                                 "activation": preset.activation, "positional": preset.positional}
    assert at.sidebar.select_slider(key="w_nhead_kv").value == preset.nhead_kv
    assert at.sidebar.checkbox(key="w_bias").value == preset.bias
    assert at.sidebar.selectbox(key="w_preset").value == name


def test_the_preset_help_lists_each_presets_family_and_parts():
    at = make_app().run()
    lines = at.sidebar.selectbox(key="w_preset").help.splitlines()
    [llama] = [line for line in lines if line.startswith("- **Llama-2-70B**")]
    assert llama == ("- **Llama-2-70B**: decoder-only, N=1, M=4096, E=8192, nhead=64, nhead_kv=8, 80 layers, "
                     "vocab 32,000, d_ff=28672, RoPE positions, pre-norm, RMSNorm, SwiGLU, no bias")
    [gpt2] = [line for line in lines if line.startswith("- **GPT-2 small**")]
    assert gpt2 == ("- **GPT-2 small**: decoder-only, N=1, M=1024, E=768, nhead=12, 12 layers, vocab 50,257, "
                    "learned positions, pre-norm, GELU, tied")
    for family in ARCHS:
        assert any(line.split(": ", 1)[-1].startswith(family) for line in lines), family


# ---- Every page, every family -------------------------------------------------------------------------------

PAGES = ["explorer", "attention", "positional", "quiz", "training_lab", "cost", "compare"]
TINY = {"encoder-decoder": "Default (M=8, E=16, nhead=2)", "decoder-only": "Tiny GPT (decoder-only)",
        "encoder-only": "Tiny BERT (encoder-only)"}
PARTS = {"norm_first": True, "norm": "rmsnorm", "activation": "swiglu", "positional": "rope", "bias": False}


def ends(arch: str) -> dict[str, TransformerConfig]:
    """Every slider at its low end, and at its high end with every part switched from the paper's (MQA, RoPE,
    SwiGLU, RMSNorm, pre-norm, no bias): the smallest and the largest model each family can show."""
    low = TransformerConfig(arch=arch, N=N_RANGE[0], M=LENGTHS[0], E=WIDTHS[0], nhead=1, vocab_size=VOCABS[0],
                            layers=LAYER_RANGE[0], d_ff=FFS[0])
    high = TransformerConfig(arch=arch, N=N_RANGE[1], M=LENGTHS[-1], E=WIDTHS[-1], nhead=MAX_NHEAD_OPTION,
                             nhead_kv=1, vocab_size=VOCABS[-1], layers=LAYER_RANGE[1], d_ff=FFS[-1], **PARTS)
    return {"lowest": low, "highest": high}


GARBAGE = {"nhead_kv": "banana", "positional": "<b>spin</b>", "norm": "9", "activation": "$x^2$", "norm_first": "maybe",
           "bias": "2", "M_target": "-7", "E": "1e9", "layers": "[x](http://example.com)"}


def assert_renders_the_family(at, page: str, arch: str) -> None:
    """No exception and no failed part on the page; the sidebar and the link show the family."""
    assert not at.exception, (page, arch, at.exception)
    assert not at.error, (page, arch, [e.value for e in at.error])
    assert at.title, page
    # The family's radio while the Architecture group is open, and the line under it while it is closed.
    assert ([r.value for r in at.sidebar.radio if r.key == "w_arch"] or [architecture_summary(at).split(",")[0]]) \
        == [arch]
    assert at.query_params["arch"] == arch
    assert ("M_target" in at.query_params) == (arch == "encoder-decoder")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_each_familys_tiny_preset(page, arch):
    at = open_page(page, config_link(PRESETS[TINY[arch]]))
    assert_renders_the_family(at, page, arch)
    assert at.sidebar.selectbox(key="w_preset").value == TINY[arch]
    assert not at.warning or not any("Part of this link" in w.value for w in at.warning)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_each_family_from_a_garbage_link(page, arch):
    """Every bad value of a link falls back with one warning naming it; the family itself is read."""
    at = open_page(page, {"arch": arch} | GARBAGE)
    assert_renders_the_family(at, page, arch)
    warning = "".join(w.value for w in at.main.warning).replace("\\", "")
    for name in GARBAGE:
        assert f"{name}=" in warning, (name, warning)
    cfg = running(at)
    assert (cfg.norm_first, cfg.norm, cfg.activation, cfg.positional, cfg.bias, cfg.nhead_kv) == \
        (False, "layernorm", "relu", "sinusoidal", True, cfg.nhead)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_each_family_at_the_sliders_ends(page, arch):
    for end, cfg in ends(arch).items():
        at = open_page(page, config_link(cfg))
        assert_renders_the_family(at, page, arch)
        assert running(at) == cfg, end


@pytest.mark.parametrize("name", list(PRESETS))
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_every_preset(page, name):
    preset = PRESETS[name]
    at = open_page(page, config_link(preset))
    assert_renders_the_family(at, page, preset.arch)
    assert running(at) == preset
    assert at.sidebar.selectbox(key="w_preset").value == name


@pytest.mark.parametrize("page", PAGES)
def test_every_page_follows_the_sidebar_from_one_family_to_the_next(page):
    """The learner's way from the paper's model to Llama-2-70B: toggles, then the preset, on one page."""
    at = architecture_opened(open_page(page, {})).run()
    for arch in ("decoder-only", "encoder-only", "encoder-decoder", "decoder-only"):
        at.sidebar.radio(key="w_arch").set_value(arch).run()
        assert_renders_the_family(at, page, arch)
    for name in ("Tiny Llama (GQA, RoPE)", "Llama-2-70B"):
        at.sidebar.selectbox(key="w_preset").set_value(name).run()
        assert_renders_the_family(at, page, "decoder-only")
        assert running(at) == PRESETS[name]


def test_toggles_alone_take_the_papers_model_to_llama_2_70b():
    """The issue's goal: from the default, the Architecture group's toggles and the size sliders reach
    Llama-2-70B exactly, and the link they write opens on the preset of that name."""
    at = architecture_opened(make_app()).run()
    for key, value in (("w_arch", "decoder-only"), ("w_norm_first", True), ("w_norm", "rmsnorm"),
                       ("w_activation", "swiglu"), ("w_positional", "rope")):
        at.sidebar.radio(key=key).set_value(value).run()
    at.sidebar.checkbox(key="w_bias").uncheck().run()
    at.sidebar.slider(key="w_N").set_value(1).run()
    for key, value in (("w_M", 4096), ("w_E", 8192), ("w_nhead", 64), ("w_nhead_kv", 8), ("w_vocab_size", 32000),
                       ("w_d_ff", 28672)):
        at.sidebar.select_slider(key=key).set_value(value).run()
    at.sidebar.slider(key="w_layers").set_value(80).run()
    assert not at.exception and not at.sidebar.error
    assert running(at) == PRESETS["Llama-2-70B"]
    assert at.sidebar.select_slider(key="w_nhead_kv").value == 8
    assert any(c.value == "nhead_kv = 8 of nhead = 64: GQA, each K/V head serves 8 query heads."
               for c in at.sidebar.caption)
    assert make_app(dict(at.query_params)).run().sidebar.selectbox(key="w_preset").value == "Llama-2-70B"
