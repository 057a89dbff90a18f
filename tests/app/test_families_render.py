"""Every architecture family through the app: the sidebar's Architecture group offers only valid configs, and
every page renders each family, its presets, the sliders' ends and garbage links without an exception."""

from __future__ import annotations

from tests.support.apptest import make_app


def sidebar_parts(at) -> dict:
    """The Architecture group's widgets as the learner sees them."""
    return {key: at.sidebar.radio(key=f"w_{key}").value for key in ("arch", "norm_first", "norm", "activation",
                                                                     "positional")}


def test_the_architecture_group_holds_every_part_and_its_default_is_the_papers_model():
    at = make_app().run()
    assert not at.exception
    assert "Architecture" in [h.value for h in at.sidebar.header]
    assert sidebar_parts(at) == {"arch": "encoder-decoder", "norm_first": False, "norm": "layernorm",
                                 "activation": "relu", "positional": "sinusoidal"}
    assert at.sidebar.radio(key="w_arch").options == ["encoder-decoder (the paper, T5)", "decoder-only (GPT, Llama)",
                                                      "encoder-only (BERT)"]
    assert at.sidebar.radio(key="w_norm_first").options == ["post-norm (the paper)", "pre-norm (GPT-2, Llama)"]
    assert at.sidebar.radio(key="w_norm").options == ["LayerNorm", "RMSNorm"]
    assert at.sidebar.radio(key="w_activation").options == ["ReLU", "GELU", "SwiGLU"]
    assert at.sidebar.radio(key="w_positional").options == ["sinusoidal", "learned", "RoPE", "none"]
    assert at.sidebar.checkbox(key="w_bias").value is True
    # nhead = 2 allows 1 or 2 K/V heads, each named beside its number.
    assert at.sidebar.select_slider(key="w_nhead_kv").options == ["1 (MQA)", "2 (MHA)"]


def test_moving_each_part_reaches_the_config_and_the_link():
    at = make_app().run()
    at.sidebar.radio(key="w_arch").set_value("decoder-only").run()
    at.sidebar.radio(key="w_norm_first").set_value(True).run()
    at.sidebar.radio(key="w_norm").set_value("rmsnorm").run()
    at.sidebar.radio(key="w_activation").set_value("swiglu").run()
    at.sidebar.radio(key="w_positional").set_value("rope").run()
    at.sidebar.select_slider(key="w_nhead_kv").set_value(1).run()
    at.sidebar.checkbox(key="w_bias").uncheck().run()
    assert not at.exception and not at.sidebar.error
    cfg = at.session_state["cfg"]
    assert (cfg.arch, cfg.norm_first, cfg.norm, cfg.activation, cfg.positional, cfg.nhead_kv, cfg.bias) == \
        ("decoder-only", True, "rmsnorm", "swiglu", "rope", 1, False)
    assert {k: at.query_params[k] for k in ("arch", "norm_first", "norm", "activation", "positional", "nhead_kv",
                                            "bias")} == \
        {"arch": "decoder-only", "norm_first": "true", "norm": "rmsnorm", "activation": "swiglu", "positional": "rope",
         "nhead_kv": "1", "bias": "false"}
    assert at.sidebar.selectbox(key="w_preset").value == "(custom)"


def test_the_target_length_and_the_two_stacks_wording_show_for_the_encoder_decoder_only():
    at = make_app({"M_target": "5"}).run()
    assert at.sidebar.select_slider(key="w_M_target").value == 5
    assert at.sidebar.slider(key="w_layers").label == "layers — encoder and decoder layers, each"
    for family, layers in [("decoder-only", "layers — decoder layers"), ("encoder-only", "layers — encoder layers")]:
        at.sidebar.radio(key="w_arch").set_value(family).run()
        assert not at.exception and not at.sidebar.error
        assert at.session_state["cfg"].M_target is None and "M_target" not in at.query_params
        assert not [s for s in at.sidebar.select_slider if s.key == "w_M_target"]
        assert at.sidebar.slider(key="w_layers").label == layers
        assert at.sidebar.select_slider(key="w_M").label == "M — sequence length"
    at.sidebar.select_slider(key="w_M").set_value(12).run()
    at.sidebar.radio(key="w_arch").set_value("encoder-decoder").run()  # back to two stacks: a target again
    assert not at.exception
    assert at.session_state["cfg"].M_target in (5, 12)
    assert at.sidebar.select_slider(key="w_M_target").value == at.session_state["cfg"].M_target


def test_nhead_kv_offers_divisors_of_nhead_and_follows_it():
    at = make_app({"E": "64", "nhead": "8"}).run()
    kv = at.sidebar.select_slider(key="w_nhead_kv")
    assert kv.options == ["1 (MQA)", "2 (GQA)", "4 (GQA)", "8 (MHA)"] and kv.value == 8
    at.sidebar.select_slider(key="w_nhead").set_value(16).run()  # MHA stays MHA
    assert at.session_state["cfg"].nhead_kv == 16
    at.sidebar.select_slider(key="w_nhead_kv").set_value(4).run()
    assert any(c.value == "nhead_kv = 4 of nhead = 16: GQA, each K/V head serves 4 query heads."
               for c in at.sidebar.caption)
    at.sidebar.select_slider(key="w_nhead").set_value(2).run()  # 4 does not divide 2: the nearest divisor
    assert (at.session_state["cfg"].nhead, at.session_state["cfg"].nhead_kv) == (2, 2)
    at.sidebar.select_slider(key="w_nhead_kv").set_value(1).run()
    at.sidebar.select_slider(key="w_nhead").set_value(32).run()  # MQA stays MQA
    assert at.session_state["cfg"].nhead_kv == 1
    at.sidebar.select_slider(key="w_E").set_value(13).run()  # a prime E: 13 heads now, and still one K/V head
    assert (at.session_state["cfg"].nhead, at.session_state["cfg"].nhead_kv) == (13, 1)
    at.sidebar.select_slider(key="w_E").set_value(1).run()  # one head: one K/V head, the only choice
    assert not at.exception and not at.sidebar.error
    assert at.session_state["cfg"].nhead_kv == 1 and at.sidebar.select_slider(key="w_nhead_kv").disabled


def test_rope_is_offered_for_an_even_d_k_only_and_comes_back_when_d_k_is_even_again():
    at = make_app({"positional": "rope", "E": "16", "nhead": "2"}).run()
    assert at.session_state["cfg"].positional == "rope"
    at.sidebar.select_slider(key="w_E").set_value(18).run()  # d_k = 9
    assert not at.exception and not at.sidebar.error
    assert at.session_state["cfg"].positional == "sinusoidal"
    assert "RoPE" not in at.sidebar.radio(key="w_positional").options
    assert any(c.value.startswith("RoPE turns pairs of dimensions, so it needs an even d_k; d_k = E/nhead = 9 is odd")
               for c in at.sidebar.caption)
    at.sidebar.select_slider(key="w_E").set_value(20).run()  # d_k = 10
    assert at.session_state["cfg"].positional == "rope"
    assert not any(c.value.startswith("RoPE turns") for c in at.sidebar.caption)
