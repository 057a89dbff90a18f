"""The new parts in a link (ui/link/parts.py): experts, latent attention, head_dim and qk_norm, the window and T5's
buckets and scales are read onto the sliders' steps, fall back with a warning where the family or the sizes do
not allow them, and are written back only where they are not the default."""

from __future__ import annotations

import pytest

from core import DEFAULT, PRESETS, TransformerConfig
from core.config import PART_PRESETS, REAL_MODELS, T5_MODELS
from tests.support.apptest import architecture_opened, make_app, running
from tests.support.links import config_link
from ui.link.config import SIZE_FIELDS, config_values, preset_named, snap_config
from ui.link.parts import PART_FIELDS, pinned

NEW_PRESETS = [*PART_PRESETS, *T5_MODELS, "Mistral-7B", "Mixtral-8x7B", "Qwen3-30B-A3B", "DeepSeek-V2-Lite",
               "DeepSeek-V3"]
DECODER = {"arch": "decoder-only", "positional": "rope"}


def test_every_new_preset_is_in_the_box_under_its_plain_name():
    assert set(NEW_PRESETS) <= set(PRESETS)
    for name in ("Mistral-7B", "Mixtral-8x7B", "Qwen3-30B-A3B", "DeepSeek-V2-Lite", "DeepSeek-V3"):
        assert PRESETS[name] is REAL_MODELS[name]
    assert PRESETS["T5-small"] is T5_MODELS["T5-small"] and PRESETS["T5-base"] is T5_MODELS["T5-base"]
    # A link names a tiny one by its short name, as the others.
    assert preset_named("tiny-moe") == ("Tiny MoE (8 experts, top 2)", None)
    assert preset_named("Tiny MLA") == ("Tiny MLA (latent attention)", None)
    assert preset_named("tiny_t5") == ("Tiny T5 (relative positions)", None)
    assert preset_named("MIXTRAL-8X7B") == ("Mixtral-8x7B", None)


@pytest.mark.parametrize("name", NEW_PRESETS)
def test_a_new_presets_link_gives_exactly_its_config(name):
    at = make_app({"preset": name.split(" (")[0].lower().replace(" ", "-")}).run()
    assert not at.exception, at.exception
    assert running(at) == PRESETS[name]
    assert at.sidebar.selectbox(key="w_preset").value == name
    assert not [w.value for w in at.warning if "link" in w.value]
    # The link written back carries the preset's parts under their config names.
    assert {k: v for k, v in dict(at.query_params).items() if k in PART_FIELDS} == \
        {k: v for k, v in config_link(PRESETS[name]).items() if k in PART_FIELDS}
    assert snap_config(dict(at.query_params)) == (PRESETS[name], [])


def test_an_old_link_stays_as_short_as_before():
    """A config without the new parts writes none of them: old links, and the default's, look as they did."""
    assert set(config_values(DEFAULT)) == set(SIZE_FIELDS)
    for name in ("GPT-2 small", "Llama-2-70B", "Tiny Llama (GQA, RoPE)"):
        assert set(config_values(PRESETS[name])) == set(SIZE_FIELDS) - {"M_target"}, name
    at = make_app().run()
    assert set(dict(at.query_params)) == set(SIZE_FIELDS)


def test_only_the_parts_set_apart_are_written():
    mixtral = config_values(PRESETS["Mixtral-8x7B"])
    assert {k: mixtral[k] for k in PART_FIELDS if k in mixtral} == {"n_experts": 8}  # top_k 2 and d_ff_expert = d_ff
    qwen = config_values(PRESETS["Qwen3-30B-A3B"])
    assert {k: qwen[k] for k in PART_FIELDS if k in qwen} == {"n_experts": 128, "top_k": 8, "d_ff_expert": 768,
                                                              "head_dim": 128, "qk_norm": True}
    assert pinned(PRESETS["Qwen3-30B-A3B"]) == {"top_k", "d_ff_expert", "head_dim"}
    t5 = config_values(PRESETS["T5-small"])
    assert {k: t5[k] for k in PART_FIELDS if k in t5} == {"scale_scores": False, "scale_embeddings": False}


def test_the_link_in_the_question_reaches_the_experts():
    at = make_app({"arch": "decoder-only", "positional": "rope", "n_experts": "8", "top_k": "2",
                   "d_ff_expert": "8"}).run()
    assert not at.exception and not at.warning
    cfg = running(at)
    assert (cfg.n_experts, cfg.top_k, cfg.d_ff_expert) == (8, 2, 8)
    assert at.query_params["n_experts"] == "8" and at.query_params["d_ff_expert"] == "8"
    assert "top_k" not in at.query_params  # 2 of 8 is what the config gives anyway


# A garbage value of each new field, on a config that allows the part: what it falls back to and the warning's words.
GARBAGE = [
    ({"n_experts": "lots"}, {"n_experts": 0}, "n_experts='lots' is not a whole number written in digits; using 0."),
    ({"n_experts": "5000"}, {"n_experts": 256}, "n_experts=5000 is outside the slider's range, 0 to 256; using 256."),
    ({"n_experts": "8", "top_k": "9"}, {"top_k": 8}, "top_k=9 is outside the slider's range, 1 to 8; using 8."),
    ({"n_experts": "8", "top_k": "x"}, {"top_k": 2}, "top_k='x' is not a whole number written in digits; using 2."),
    ({"n_experts": "8", "n_shared_experts": "-1"}, {"n_shared_experts": 0}, "n_shared_experts=-1 is outside"),
    ({"n_experts": "8", "d_ff_expert": "0"}, {"d_ff_expert": 1}, "d_ff_expert=0 is outside the slider's range"),
    ({"n_experts": "8", "d_ff_expert": "?"}, {"d_ff_expert": 64}, "d_ff_expert='?' is not a whole number written "
                                                                  "in digits; using d_ff_expert = d_ff = 64."),
    ({"n_experts": "8", "first_dense_layers": "2"}, {"first_dense_layers": 1},
     "first_dense_layers=2 is outside the slider's range, 0 to 1; using 1."),
    ({"n_experts": "8", "norm_topk": "perhaps"}, {"norm_topk": True}, "norm_topk='perhaps' is not true or false"),
    ({"attention": "flash"}, {"attention": "mha"}, "attention='flash' is not one of mha, mla; using mha."),
    ({"attention": "mla", "kv_lora_rank": "-4"}, {"kv_lora_rank": 1}, "kv_lora_rank=-4 is outside"),
    ({"attention": "mla", "q_lora_rank": "q"}, {"q_lora_rank": 0}, "q_lora_rank='q' is not a whole number"),
    ({"attention": "mla", "rope_head_dim": "5"}, {"rope_head_dim": 6},
     "rope_head_dim=5 is not one of the slider's steps; using the nearest, 6."),
    ({"attention": "mla", "nope_head_dim": "1e3"}, {"nope_head_dim": 8}, "nope_head_dim='1e3' is not a whole"),
    ({"attention": "mla", "v_head_dim": "99999999"}, {"v_head_dim": 12288}, "v_head_dim=99999999 is outside"),
    ({"head_dim": "7"}, {"head_dim": 8}, "head_dim=7 is odd, and positional=rope turns pairs of dimensions"),
    ({"head_dim": "wide"}, {"head_dim": 8}, "head_dim='wide' is not a whole number written in digits; using "
                                            "E/nhead = 8."),
    ({"qk_norm": "2"}, {"qk_norm": False}, "qk_norm='2' is not true or false; using false."),
    ({"window": "-8"}, {"window": 0}, "window=-8 is outside the slider's range, 0 to 8192; using 0."),
    ({"window": "4", "global_every": "3"}, {"global_every": 2}, "global_every=3 is outside the slider's range, 0 to "
                                                               "2; using 2."),
    ({"window": "4", "global_every": "1"}, {"global_every": 2}, "global_every=1 would keep every layer full"),
    ({"relative_buckets": "2"}, {"relative_buckets": 4}, "relative_buckets=2 is outside the slider's range, 4 to "
                                                         "128; using 4."),
    ({"relative_max_distance": "0"}, {"relative_max_distance": 1}, "relative_max_distance=0 is outside"),
    ({"scale_scores": "nope"}, {"scale_scores": True}, "scale_scores='nope' is not true or false; using true."),
    ({"scale_embeddings": "T"}, {"scale_embeddings": True}, "scale_embeddings='T' is not true or false"),
]


def test_every_new_field_has_a_garbage_case():
    assert {name for query, _, _ in GARBAGE for name in query} >= set(PART_FIELDS)


@pytest.mark.parametrize("query, expected, words", GARBAGE, ids=[str(q) for q, _, _ in GARBAGE])
def test_a_garbage_value_of_a_new_field_warns_and_falls_back(query, expected, words):
    cfg, warnings = snap_config(DECODER | query)
    assert {name: getattr(cfg, name) for name in expected} == expected
    assert any(words in w for w in warnings), warnings


@pytest.mark.parametrize("query, expected, words", GARBAGE[::4], ids=[str(q) for q, _, _ in GARBAGE[::4]])
def test_the_app_warns_about_a_garbage_part_and_runs_the_fallback(query, expected, words):
    at = make_app(DECODER | query).run()
    assert not at.exception, at.exception
    assert {name: getattr(running(at), name) for name in expected} == expected
    warning = next(w.value for w in at.warning if "link" in w.value)
    assert query and list(query)[-1].replace("_", "\\_") in warning


# A part the family or the other parts do not allow is left out, and the warning says why.
NOT_ALLOWED = [
    ({"n_experts": "8"}, {"n_experts": 0}, "n_experts=8 is not built for arch=encoder-decoder; using n_experts=0"),
    ({"top_k": "2"}, {"top_k": None}, "top_k=2 is left out: n_experts=0 is a dense FFN, with no experts."),
    ({"attention": "mla"}, {"attention": "mha"}, "attention=mla is not built with arch=encoder-decoder"),
    ({"window": "4"}, {"window": 0}, "window=4 is left out: a window is for arch=decoder-only."),
    (DECODER | {"global_every": "2"}, {"global_every": 0}, "global_every=2 is left out: window=0 is full attention"),
    (DECODER | {"kv_lora_rank": "8"}, {"kv_lora_rank": None}, "kv_lora_rank=8 is left out: they are widths of "
                                                              "attention=mla."),
    ({"arch": "decoder-only", "attention": "mla"}, {"attention": "mha"},
     "attention=mla is not built with positional=sinusoidal, where MLA turns its keys with RoPE"),
    (DECODER | {"nhead": "2", "nhead_kv": "1", "attention": "mla"}, {"attention": "mha", "nhead_kv": 1},
     "attention=mla is not built with nhead_kv=1"),
    (DECODER | {"attention": "mla", "qk_norm": "true", "window": "4", "head_dim": "12"},
     {"attention": "mla", "qk_norm": False, "window": 0, "head_dim": 8},
     "head_dim=12, qk_norm=true, window=4 are left out: attention=mla sets its own head widths"),
    # An odd d_k: latent attention turns its own rope_head_dim, and RoPE waits only where MLA is left out.
    (DECODER | {"E": "6", "nhead": "2", "attention": "mla"}, {"attention": "mla", "positional": "rope"}, ""),
    (DECODER | {"E": "6", "nhead": "2", "nhead_kv": "1", "attention": "mla"},
     {"attention": "mha", "positional": "sinusoidal"}, "d_k = E/nhead = 6/2 = 3 is odd, so using sinusoidal."),
]


@pytest.mark.parametrize("query, expected, words", NOT_ALLOWED, ids=[str(q) for q, _, _ in NOT_ALLOWED])
def test_a_part_the_config_does_not_allow_is_left_out_with_a_reason(query, expected, words):
    cfg, warnings = snap_config(query)
    assert {name: getattr(cfg, name) for name in expected} == expected
    assert any(words in w for w in warnings) if words else warnings == [], warnings


EXTREMES = [
    DECODER | {"n_experts": "256", "top_k": "256", "n_shared_experts": "8", "d_ff_expert": "1",
               "first_dense_layers": "95", "layers": "96", "norm_topk": "false"},
    DECODER | {"n_experts": "1", "top_k": "1", "first_dense_layers": "0", "layers": "1"},
    DECODER | {"attention": "mla", "kv_lora_rank": "1", "q_lora_rank": "0", "rope_head_dim": "2",
               "nope_head_dim": "1", "v_head_dim": "1"},
    DECODER | {"attention": "mla", "E": "12288", "nhead": "96", "kv_lora_rank": "12288", "q_lora_rank": "12288",
               "rope_head_dim": "12288", "nope_head_dim": "12288", "v_head_dim": "12288", "M": "1", "N": "1"},
    DECODER | {"head_dim": "2", "qk_norm": "true", "window": "1", "global_every": "96", "layers": "96"},
    DECODER | {"head_dim": "12288", "window": "8192", "M": "8192", "N": "1", "nhead": "1"},
    {"positional": "relative", "relative_buckets": "4", "relative_max_distance": "1", "scale_scores": "false",
     "scale_embeddings": "false"},
    {"positional": "relative", "relative_buckets": "128", "relative_max_distance": "8192"},
]


@pytest.mark.parametrize("query", EXTREMES, ids=range(len(EXTREMES)))
def test_a_link_at_the_parts_extremes_is_taken_as_written_and_written_back(query):
    cfg, warnings = snap_config(query)
    assert warnings == []
    assert {name: str(getattr(cfg, name)).lower() for name in query} == query
    assert snap_config(config_link(cfg)) == (cfg, [])  # and its link gives it back


def test_the_sidebar_runs_a_link_at_the_experts_extremes():
    at = make_app(EXTREMES[0]).run()
    assert not at.exception, at.exception
    cfg = running(at)
    assert (cfg.n_experts, cfg.top_k, cfg.n_shared_experts, cfg.d_ff_expert, cfg.first_dense_layers) == \
        (256, 256, 8, 1, 95)


def test_a_follower_follows_its_source_in_the_sidebar():
    """head_dim left at E/nhead follows E; top_k left at 2 stays 2 through more experts; set apart, it stays."""
    at = make_app(DECODER | {"n_experts": "8"}).run()
    at.sidebar.select_slider(key="w_E").set_value(32).run()
    cfg = running(at)
    assert (cfg.E, cfg.head_dim, cfg.top_k) == (32, 16, 2) and "head_dim" not in at.query_params
    qwen = make_app({"preset": "qwen3-30b-a3b"}).run()
    qwen.sidebar.select_slider(key="w_E").set_value(4096).run()
    assert (running(qwen).E, running(qwen).head_dim) == (4096, 128)


def test_the_family_switched_away_leaves_the_experts_out_and_brings_them_back():
    at = architecture_opened(make_app({"preset": "tiny-moe"})).run()
    at.sidebar.radio(key="w_arch").set_value("encoder-decoder").run()
    assert not at.exception and running(at).n_experts == 0 and "n_experts" not in at.query_params
    assert any("n_experts=8 is not built for arch=encoder-decoder" in c.value for c in at.sidebar.caption)
    at.sidebar.radio(key="w_arch").set_value("decoder-only").run()
    assert running(at) == TransformerConfig.from_dict(PRESETS["Tiny MoE (8 experts, top 2)"].to_dict())


def test_any_mix_of_part_values_snaps_to_a_valid_config_without_raising():
    """What the sidebar's widgets and any link can ask for, in any mix with the family and the sizes: snap_config
    never raises, and what it gives is on the sliders (its own link gives it back without a word)."""
    import random

    rng = random.Random(0)
    choices = {
        "arch": ["encoder-decoder", "decoder-only", "encoder-only"], "positional": ["rope", "sinusoidal", "relative"],
        "E": ["6", "16", "64"], "nhead": ["1", "2", "4"], "nhead_kv": ["1", "2"], "layers": ["1", "2", "5"],
        "n_experts": ["0", "1", "8", "300", "x"], "top_k": ["1", "3", "9", ""], "n_shared_experts": ["0", "9"],
        "d_ff_expert": ["1", "7", "99999999"], "first_dense_layers": ["0", "1", "4"], "norm_topk": ["false", "?"],
        "attention": ["mha", "mla", "MLA", "gqa"], "kv_lora_rank": ["0", "8"], "q_lora_rank": ["0", "3"],
        "rope_head_dim": ["1", "3", "4"], "nope_head_dim": ["2"], "v_head_dim": ["5"], "head_dim": ["3", "8", "0"],
        "qk_norm": ["true", "false"], "window": ["0", "1", "5", "9999999"], "global_every": ["0", "1", "2", "7"],
        "relative_buckets": ["1", "8", "4096"], "relative_max_distance": ["0", "16"], "scale_scores": ["false"],
        "scale_embeddings": ["no", "maybe"],
    }
    for _ in range(400):
        query = {name: rng.choice(values) for name, values in choices.items() if rng.random() < 0.6}
        cfg, _ = snap_config(query)
        assert snap_config(config_link(cfg)) == (cfg, []), query
