"""The sidebar's part controls (ui/sidebar/parts.py): each shows only where its part applies, moves to its extremes
without an invalid config, keeps what the learner wanted while the family leaves a part out, and writes the link."""

from __future__ import annotations

from core import PRESETS, TransformerConfig
from tests.support.apptest import architecture_opened, architecture_summary, make_app, running
from ui.sidebar.config import ARCHITECTURE_OPEN

DECODER = {"arch": "decoder-only", "positional": "rope"}


def keys(at) -> set[str]:
    """The keys of the sidebar's widgets drawn on the last run."""
    return {w.key for kind in ("radio", "select_slider", "slider", "checkbox") for w in getattr(at.sidebar, kind)}


def test_the_default_sidebar_keeps_the_architecture_group_closed_and_says_what_runs():
    at = make_app().run()
    assert not at.exception
    [group] = [e for e in at.sidebar.expander if e.label == "Architecture"]
    assert not group.proto.expanded
    assert not {"w_arch", "w_nhead_kv", "w_bias", "w_head_dim"} & keys(at)  # drawn only once opened
    assert architecture_summary(at) == "encoder-decoder, post-norm, LayerNorm, ReLU, sinusoidal positions, " \
                                       "MHA (nhead_kv = 2), biases"
    at = architecture_opened(at).run()
    # The encoder-decoder offers no experts, no latent attention and no window; T5's buckets wait for relative.
    assert {"w_ffn", "w_attention", "w_window_on", "w_relative_buckets", "w_n_experts"} & keys(at) == set()
    assert {"w_arch", "w_bias", "w_head_dim", "w_qk_norm"} <= keys(at)


def test_experts_at_their_extremes():
    at = architecture_opened(make_app(DECODER)).run()
    at.sidebar.radio(key="w_ffn").set_value("experts").run()
    assert (running(at).n_experts, running(at).top_k) == (8, 2)
    assert {"w_n_experts", "w_top_k", "w_n_shared_experts", "w_d_ff_expert", "w_first_dense_layers",
            "w_norm_topk"} <= keys(at)
    at.sidebar.select_slider(key="w_n_experts").set_value(256).run()
    at.sidebar.select_slider(key="w_top_k").set_value(256).run()
    at.sidebar.slider(key="w_n_shared_experts").set_value(8).run()
    at.sidebar.select_slider(key="w_d_ff_expert").set_value(1).run()
    at.sidebar.select_slider(key="w_first_dense_layers").set_value(1).run()
    at.sidebar.checkbox(key="w_norm_topk").uncheck().run()
    cfg = running(at)
    assert not at.exception and (cfg.n_experts, cfg.top_k, cfg.n_shared_experts, cfg.d_ff_expert,
                                 cfg.first_dense_layers, cfg.norm_topk) == (256, 256, 8, 1, 1, False)
    assert at.query_params["top_k"] == "256" and at.query_params["first_dense_layers"] == "1"
    # Fewer experts than top_k: top_k is offered up to n_experts only, and comes down with it.
    at.sidebar.select_slider(key="w_n_experts").set_value(1).run()
    assert not at.exception and (running(at).n_experts, running(at).top_k) == (1, 1)
    assert at.sidebar.select_slider(key="w_top_k").options == ["1"] and at.sidebar.select_slider(key="w_top_k").disabled
    # One layer: no dense layer can come first.
    at.sidebar.slider(key="w_layers").set_value(1).run()
    assert not at.exception and running(at).first_dense_layers == 0
    at.sidebar.radio(key="w_ffn").set_value("dense").run()
    assert not at.exception and not running(at).moe and "n_experts" not in at.query_params
    assert "w_top_k" not in keys(at)


def test_experts_wait_out_the_encoder_decoder():
    at = architecture_opened(make_app({"preset": "tiny-moe"})).run()
    at.sidebar.radio(key="w_arch").set_value("encoder-decoder").run()
    assert not at.exception and not running(at).moe and "w_ffn" not in keys(at)
    assert any("n_experts=8 is not built for arch=encoder-decoder" in c.value for c in at.sidebar.caption)
    at.sidebar.radio(key="w_arch").set_value("decoder-only").run()
    assert running(at) == TransformerConfig.from_dict(PRESETS["Tiny MoE (8 experts, top 2)"].to_dict())


def test_latent_attention_is_offered_only_with_rope_and_a_kv_head_per_query_head():
    at = architecture_opened(make_app({"arch": "decoder-only"})).run()
    assert at.sidebar.radio(key="w_attention").options == ["MHA / GQA"]
    at = architecture_opened(make_app(DECODER | {"nhead": "2"})).run()
    assert at.sidebar.radio(key="w_attention").options == ["MHA / GQA", "MLA (latent)"]
    at.sidebar.radio(key="w_attention").set_value("mla").run()
    cfg = running(at)
    assert not at.exception and (cfg.attention, cfg.kv_lora_rank, cfg.rope_head_dim, cfg.nope_head_dim) == \
        ("mla", 32, 4, 8)  # the DeepSeek-V2 ratios to d_k = 8
    assert {"w_kv_lora_rank", "w_q_lora_rank", "w_rope_head_dim", "w_nope_head_dim", "w_v_head_dim"} <= keys(at)
    assert {"w_head_dim", "w_qk_norm", "w_window_on"} & keys(at) == set()
    for key, value in (("w_kv_lora_rank", 12288), ("w_q_lora_rank", 0), ("w_rope_head_dim", 2),
                       ("w_nope_head_dim", 1), ("w_v_head_dim", 12288)):
        at.sidebar.select_slider(key=key).set_value(value).run()
        assert not at.exception, key
    cfg = running(at)
    assert (cfg.kv_lora_rank, cfg.q_lora_rank, cfg.rope_head_dim, cfg.nope_head_dim, cfg.v_head_dim) == \
        (12288, 0, 2, 1, 12288)
    assert all(int(v) % 2 == 0 for v in at.sidebar.select_slider(key="w_rope_head_dim").options)
    # Sinusoidal positions leave latent attention out, with a sentence, and RoPE brings it back.
    at.sidebar.radio(key="w_positional").set_value("sinusoidal").run()
    assert not at.exception and running(at).attention == "mha"
    at.sidebar.radio(key="w_positional").set_value("rope").run()
    assert not at.exception


def test_head_dim_follows_e_over_nhead_until_set_apart_and_qk_norm():
    at = architecture_opened(make_app(DECODER)).run()
    at.sidebar.select_slider(key="w_E").set_value(32).run()
    assert running(at).head_dim == 16 and "head_dim" not in at.query_params
    assert all(int(v) % 2 == 0 for v in at.sidebar.select_slider(key="w_head_dim").options)  # RoPE: even
    at.sidebar.select_slider(key="w_head_dim").set_value(2).run()
    at.sidebar.checkbox(key="w_qk_norm").check().run()
    at.sidebar.select_slider(key="w_E").set_value(64).run()
    assert not at.exception and (running(at).head_dim, running(at).qk_norm) == (2, True)
    at.sidebar.select_slider(key="w_head_dim").set_value(12288).run()
    assert not at.exception and at.query_params["head_dim"] == "12288"


def test_a_window_at_its_extremes():
    at = architecture_opened(make_app(DECODER | {"layers": "4"})).run()
    at.sidebar.radio(key="w_window_on").set_value("on").run()
    assert running(at).window == 4 and {"w_window", "w_global_every"} <= keys(at)
    at.sidebar.select_slider(key="w_window").set_value(1).run()
    at.sidebar.select_slider(key="w_global_every").set_value(4).run()
    assert not at.exception and (running(at).window, running(at).global_every) == (1, 4)
    assert 1 not in [int(v.split()[0]) for v in at.sidebar.select_slider(key="w_global_every").options]
    at.sidebar.slider(key="w_layers").set_value(2).run()  # 4 is past the last layer now
    assert not at.exception and running(at).global_every in (0, 2)
    at.sidebar.select_slider(key="w_window").set_value(8192).run()
    assert not at.exception and running(at).window == 8192
    at.sidebar.radio(key="w_arch").set_value("encoder-only").run()
    assert not at.exception and running(at).window == 0 and "w_window_on" not in keys(at)


def test_t5s_controls_show_with_relative_positions_and_reach_their_extremes():
    at = architecture_opened(make_app({"preset": "tiny-t5"})).run()
    assert {"w_relative_buckets", "w_relative_max_distance", "w_scale_scores", "w_scale_embeddings"} <= keys(at)
    at.sidebar.slider(key="w_relative_buckets").set_value(4).run()
    at.sidebar.select_slider(key="w_relative_max_distance").set_value(1).run()
    assert not at.exception and (running(at).relative_buckets, running(at).relative_max_distance) == (4, 1)
    at.sidebar.slider(key="w_relative_buckets").set_value(128).run()
    at.sidebar.select_slider(key="w_relative_max_distance").set_value(8192).run()
    at.sidebar.checkbox(key="w_scale_scores").check().run()
    cfg = running(at)
    assert not at.exception and (cfg.relative_buckets, cfg.relative_max_distance, cfg.scale_scores) == (128, 8192, True)
    at.sidebar.radio(key="w_positional").set_value("sinusoidal").run()
    assert not at.exception and {"w_relative_buckets", "w_relative_max_distance"} & keys(at) == set()
    assert "w_scale_embeddings" in keys(at)  # still set apart (False): shown so that it can be put back


def test_a_preset_chosen_in_the_box_sets_every_part_widget():
    at = architecture_opened(make_app()).run()
    for name in ("Qwen3-30B-A3B", "DeepSeek-V2-Lite", "Mistral-7B", "T5-small", "Default (M=8, E=16, nhead=2)"):
        at.sidebar.selectbox(key="w_preset").set_value(name).run()
        assert not at.exception, name
        assert running(at) == PRESETS[name], name
        assert at.sidebar.selectbox(key="w_preset").value == name


def test_the_parts_a_link_sets_are_named_under_the_closed_group():
    at = make_app({"preset": "qwen3-30b-a3b"}).run()
    assert architecture_summary(at) == ("decoder-only, pre-norm, RMSNorm, SwiGLU, RoPE positions, GQA (nhead_kv = 4), "
                                        "no bias, 128 experts (top 8, d_ff_expert=768), head_dim=128, qk_norm")


def test_closing_the_group_keeps_every_value_the_learner_set_in_it():
    at = architecture_opened(make_app(DECODER)).run()
    at.sidebar.radio(key="w_ffn").set_value("experts").run()
    at.sidebar.select_slider(key="w_n_experts").set_value(16).run()
    at.sidebar.checkbox(key="w_bias").uncheck().run()
    before = running(at)
    at.session_state[ARCHITECTURE_OPEN] = False
    at.run()
    assert not at.exception and "w_n_experts" not in keys(at)
    at.sidebar.select_slider(key="w_M").set_value(12).run()  # runs with the group closed keep its values
    at.sidebar.select_slider(key="w_E").set_value(32).run()
    assert (running(at).n_experts, running(at).bias, running(at).moe, running(at).arch) == (16, False, True,
                                                                                             "decoder-only")
    at.sidebar.select_slider(key="w_M").set_value(10).run()  # head_dim, closed away, still follows E / nhead
    assert running(at).head_dim == 32 // running(at).nhead
    at = architecture_opened(at).run()
    assert at.sidebar.select_slider(key="w_n_experts").value == 16 and at.sidebar.checkbox(key="w_bias").value is False
    assert running(at).n_experts == before.n_experts


def test_the_trained_model_shows_its_parts_greyed_out_and_the_learners_come_back():
    from core.train import ReversalSettings, train_reversal

    res = train_reversal(ReversalSettings(steps=5, N=8), keep_model=True)
    at = architecture_opened(make_app({"preset": "tiny-moe"})).run()
    at.session_state["lab_trained"] = res.trained
    at.run()
    at.radio(key="yt_model").set_value("trained in the Training lab").run()
    assert not at.exception and running(at) == res.trained.config
    assert at.sidebar.radio(key="shown_ffn").disabled and at.sidebar.radio(key="shown_ffn").value == "dense"
    assert at.sidebar.radio(key="shown_attention").disabled
    head_dim = at.sidebar.select_slider(key="shown_head_dim")
    assert head_dim.disabled and head_dim.value == res.trained.config.head_dim
    assert "w_n_experts" not in keys(at)
    at.sidebar.button(key="sidebar_leave_trained").click().run()
    assert not at.exception
    assert running(at) == TransformerConfig.from_dict(PRESETS["Tiny MoE (8 experts, top 2)"].to_dict())
