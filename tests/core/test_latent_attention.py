"""Multi-head latent attention (core.latent_attention): parity with Hugging Face's DeepSeek-V2 on copied weights,
live shapes against the rows' formulas, the KV cache of latents, parameter counts and clear errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import transformers
from hypothesis import given, settings, strategies as st

from core import Transformer, TransformerConfig, formula_shape, generate_square_subsequent_mask, trace
from core.kv_cache import check_cache, generate
from core.config import DEEPSEEK_V2_LITE, DEEPSEEK_V3, PART_PRESETS, TINY_MLA
from core.memory import (PUBLISHED_PARAMS, active_params, kv_cache_bytes, kv_cache_summary, kv_numbers_per_token,
                         param_counts, real_model)
from core.slim import slim_attention
from core.steps import step_through
from core.views import kv_cache_view, kv_sharing, rope_view
from tests.support.deepseek import copy_dense_model, deepseek_v2_config, shake_norms

ROOT = Path(__file__).resolve().parents[2]
MLA_BASE = dict(arch="decoder-only", attention="mla", positional="rope", norm="rmsnorm", norm_first=True,
                activation="swiglu", bias=False)


def tiny(**changes) -> TransformerConfig:
    sizes = dict(N=2, M=7, E=16, nhead=4, layers=2, d_ff=24, vocab_size=50, seed=3, kv_lora_rank=12,
                 rope_head_dim=4, nope_head_dim=6, v_head_dim=5)
    return TransformerConfig(**(MLA_BASE | sizes | changes))


def ids_for(cfg: TransformerConfig) -> torch.Tensor:
    return torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M), generator=torch.Generator().manual_seed(5))  # (N, M)


@pytest.mark.parametrize("changes", [{}, {"q_lora_rank": 10}, {"q_lora_rank": 6, "bias": True},
                                     {"tie_embeddings": True, "nhead": 2, "rope_head_dim": 8}],
                         ids=["uncompressed-query", "compressed-query", "biases", "tied-two-heads"])
@torch.no_grad()
def test_logits_match_hugging_face_deepseek_v2(changes):
    cfg = tiny(**changes)
    ours = Transformer.from_config(cfg)
    shake_norms(ours)
    hf = transformers.DeepseekV2ForCausalLM(deepseek_v2_config(cfg)).eval()
    copy_dense_model(ours, hf)
    ids = ids_for(cfg)
    logits = ours(None, ids, tgt_mask=generate_square_subsequent_mask(cfg.M))  # (N, M, vocab_size)
    torch.testing.assert_close(logits, hf(ids).logits, atol=1e-4, rtol=1e-4)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())


@pytest.mark.parametrize("changes", [{"q_lora_rank": 10, "n_shared_experts": 2}, {"n_shared_experts": 1, "top_k": 1}],
                         ids=["compressed-query-two-shared", "one-shared-top-1"])
@torch.no_grad()
def test_with_routed_and_shared_experts_logits_match_hugging_face_deepseek_v2(changes):
    """DeepSeek-V2's whole layer: latent attention, a dense first layer, then routed experts (softmax, top-k,
    weights not renormalised) and shared experts every token passes through."""
    cfg = tiny(layers=3, n_experts=4, top_k=2, d_ff_expert=8, first_dense_layers=1, norm_topk=False) \
        .replace(**changes)
    ours = Transformer.from_config(cfg)
    shake_norms(ours)
    hf = transformers.DeepseekV2ForCausalLM(deepseek_v2_config(
        cfg, first_k_dense_replace=1, n_routed_experts=4, num_experts_per_tok=cfg.top_k, moe_intermediate_size=8,
        n_shared_experts=cfg.n_shared_experts, routed_scaling_factor=1.0, topk_method="greedy")).eval()
    copy_dense_model(ours, hf)
    ids = ids_for(cfg)
    logits = ours(None, ids, tgt_mask=generate_square_subsequent_mask(cfg.M))  # (N, M, vocab_size)
    torch.testing.assert_close(logits, hf(ids).logits, atol=1e-4, rtol=1e-4)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())


@st.composite
def mla_configs(draw):
    """Random valid latent-attention configs: decoder-only or encoder-only, any widths, compressed query or not."""
    nhead, layers = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    n_experts = draw(st.sampled_from([0, 0, 3]))
    moe = {} if not n_experts else dict(
        n_experts=n_experts, top_k=draw(st.integers(1, n_experts)), d_ff_expert=draw(st.integers(1, 8)),
        n_shared_experts=draw(st.integers(0, 2)), first_dense_layers=draw(st.integers(0, layers - 1)))
    return TransformerConfig(**moe,
        arch=draw(st.sampled_from(["decoder-only", "encoder-only"])), attention="mla", positional="rope",
        N=draw(st.integers(1, 3)), M=draw(st.integers(1, 9)), E=nhead * draw(st.integers(1, 6)), nhead=nhead,
        vocab_size=draw(st.integers(2, 30)), layers=layers, d_ff=draw(st.integers(1, 16)),
        kv_lora_rank=draw(st.integers(1, 12)), q_lora_rank=draw(st.sampled_from([0, 0, 1, 5])),
        rope_head_dim=2 * draw(st.integers(1, 4)), nope_head_dim=draw(st.integers(1, 6)),
        v_head_dim=draw(st.integers(1, 6)), norm=draw(st.sampled_from(["layernorm", "rmsnorm"])),
        norm_first=draw(st.booleans()), activation=draw(st.sampled_from(["relu", "swiglu"])),
        bias=draw(st.booleans()), tie_embeddings=draw(st.booleans()), seed=draw(st.integers(0, 5)),
    )


@settings(max_examples=25, deadline=None)
@given(mla_configs(), st.booleans())
def test_live_shapes_match_their_formulas(cfg, meta):
    t = trace(cfg, shape_only=meta)
    keys = {r.key for r in t.rows + t.extras}
    assert {"latent_kv", "rope_key", "k_stacked", "v_stacked"} <= keys
    assert ("compressed_query" in keys) == (cfg.q_lora_rank > 0)
    assert ("kv_cache" in keys) == (cfg.arch == "decoder-only")
    T_e = None if meta or not cfg.moe else int(t.value("tokens_per_expert")[0])  # the data's, on a live pass
    for row in t.rows + t.extras:
        assert row.shape == formula_shape(row.formula, cfg, T_e), row.name
    assert t.row("latent_kv").shape == (cfg.N, cfg.M, cfg.kv_lora_rank)
    assert t.row("k_stacked").shape == (cfg.N, cfg.nhead, cfg.M, cfg.nope_head_dim + cfg.rope_head_dim)
    assert t.row("v_stacked").shape == (cfg.N, cfg.nhead, cfg.M, cfg.v_head_dim)
    assert t.params == param_counts(cfg)  # the formulas, part by part, equal the built module's count


@pytest.mark.parametrize("changes", [{}, {"q_lora_rank": 6, "bias": True}, {"nhead": 1, "rope_head_dim": 2},
                                     {"n_experts": 4, "top_k": 2, "d_ff_expert": 8, "n_shared_experts": 1,
                                      "first_dense_layers": 1, "norm_topk": False}],
                         ids=["mla", "compressed-query-biases", "one-head", "with-experts"])
def test_cached_logits_equal_a_full_pass_at_every_step(changes):
    cfg, G = tiny(M=5, max_len=12, layers=3, **changes), 6
    model = Transformer.from_config(cfg)
    out = generate(cfg, G, model)
    with torch.inference_mode():
        for t, cached in enumerate(out.step_logits):
            seen = out.tokens[:, :cfg.M + t]  # (N, M + t)
            full = model(None, seen, tgt_mask=generate_square_subsequent_mask(cfg.M + t))[:, -1]  # (N, vocab_size)
            torch.testing.assert_close(cached, full, atol=1e-5, rtol=1e-5)
            # only the latent and the rotary key are cached, never a head's K or V
            assert out.cache_shapes[t] == (((cfg.N, cfg.M + t, cfg.kv_lora_rank),
                                            (cfg.N, cfg.M + t, cfg.rope_head_dim)),) * cfg.layers
    check = check_cache(cfg, G)
    assert check.agree and check.cache_shape == (cfg.layers, cfg.N, cfg.M + G, cfg.kv_lora_rank + cfg.rope_head_dim)


def test_the_cache_keeps_kv_lora_rank_plus_rope_head_dim_numbers_per_token_and_layer():
    cfg = tiny()
    per_token = cfg.kv_lora_rank + cfg.rope_head_dim  # 12 + 4
    assert kv_cache_bytes(cfg) == cfg.layers * cfg.N * cfg.M * per_token * 4
    assert kv_cache_bytes(cfg, nhead_kv=cfg.nhead) == cfg.layers * cfg.N * cfg.M * cfg.nhead * (10 + 5) * 4
    t = trace(cfg)
    assert t.row("kv_cache").shape == (cfg.layers, cfg.N, cfg.M, per_token)
    assert t.to_dict()["kv_cache"]["shape"] == [cfg.layers, cfg.N, cfg.M, per_token]
    torch.testing.assert_close(t.tensors["kv_cache"][0, ..., :cfg.kv_lora_rank], t.value("latent_kv"))


def test_parameters_are_counted_by_part_from_the_built_module():
    cfg = tiny(q_lora_rank=10, bias=True)
    model = Transformer.from_config(cfg, device="meta")
    attn = model.decoder[0].self_attn
    E, H = cfg.E, cfg.nhead
    assert trace(cfg).params == param_counts(cfg) == {
        "token embeddings": 50 * E, "positional table": 0,
        "attention: query": 2 * (E * 10 + 10 + 10 + 10 * H * (6 + 4)),  # W_dq and its bias, q_norm, W_uq
        "attention: latent and rotary key (W_dkv)": 2 * (E + 1) * (12 + 4),
        "attention: latent norm": 2 * 12,
        "attention: K and V back from the latent (W_ukv)": 2 * 12 * H * (6 + 5),
        "attention: output (W_o)": 2 * (H * 5 * E + E),
        "FFN": 2 * (3 * E * 24 + 2 * 24 + E), "norms": 2 * 2 * E + E, "output layer": E * 50,
        "total": sum(p.numel() for p in model.parameters()),
    }
    assert attn.W_q is None and attn.W_uq.weight.shape == (H * (6 + 4), 10)


@pytest.mark.parametrize("values, words", [
    ({"arch": "decoder-only", "positional": "rope", "kv_lora_rank": 8}, ["kv_lora_rank=8", "attention='mla'"]),
    ({"arch": "decoder-only", "positional": "rope", "q_lora_rank": 4}, ["q_lora_rank=4", "attention='mla'"]),
    ({"attention": "mla", "positional": "rope"}, ["arch='encoder-decoder'", "decoder-only"]),
    ({"attention": "mla", "arch": "decoder-only"}, ["positional='rope'", "positional='sinusoidal'"]),
    ({"attention": "mla", "arch": "decoder-only", "positional": "rope", "rope_head_dim": 5},
     ["rope_head_dim=5", "4 or 6"]),
    ({"attention": "mla", "arch": "decoder-only", "positional": "rope", "nhead": 4, "nhead_kv": 2},
     ["nhead_kv=2", "leave nhead_kv out"]),
    ({"attention": "mla", "arch": "decoder-only", "positional": "rope", "kv_lora_rank": 0},
     ["kv_lora_rank=0", "between 1 and"]),
    ({"attention": "gqa"}, ["attention='gqa'", "mha, mla"]),
    ({"attention": "mla", "arch": "decoder-only", "positional": "rope", "head_dim": 4},
     ["head_dim=4", "leave head_dim"]),
    ({"attention": "mla", "arch": "decoder-only", "positional": "rope", "qk_norm": True}, ["qk_norm=True", "leave"]),
    ({"attention": "mla", "arch": "decoder-only", "positional": "rope", "window": 4}, ["window=4", "window=0"]),
])
def test_bad_latent_attention_configs_are_refused_with_the_way_out(values, words):
    with pytest.raises(ValueError) as err:
        TransformerConfig(**values)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_unset_widths_follow_the_papers_ratios_and_follow_e_and_nhead():
    cfg = TransformerConfig(arch="decoder-only", positional="rope", attention="mla", E=32, nhead=2)  # d_k = 16
    widths = (cfg.kv_lora_rank, cfg.q_lora_rank, cfg.rope_head_dim, cfg.nope_head_dim, cfg.v_head_dim)
    assert widths == (64, 0, 8, 16, 16)
    wider = cfg.replace(E=64)
    assert (wider.kv_lora_rank, wider.rope_head_dim, wider.nope_head_dim) == (128, 16, 32)
    pinned = cfg.replace(kv_lora_rank=7).replace(nhead=4)
    assert (pinned.kv_lora_rank, pinned.nope_head_dim) == (7, 8)
    back = cfg.replace(attention="mha")
    assert back.kv_lora_rank is None and back.to_dict() == TransformerConfig(
        arch="decoder-only", positional="rope", E=32, nhead=2).to_dict()
    assert TransformerConfig.from_dict(cfg.to_dict()) == cfg


def test_cli_flags_set_the_latent_widths_and_a_bad_one_exits_2_with_one_line():
    base = [sys.executable, "-m", "core", "--arch", "decoder-only", "--positional", "rope", "--attention", "mla"]
    ok = subprocess.run(base + ["--kv-lora-rank", "6", "--q_lora_rank", "3", "--rope-head-dim", "2",
                                "--nope-head-dim", "5", "--v-head-dim", "7", "--json"],
                        capture_output=True, text=True, cwd=ROOT, check=True)
    config = json.loads(ok.stdout)["config"]
    assert {k: config[k] for k in ("attention", "kv_lora_rank", "q_lora_rank", "rope_head_dim", "nope_head_dim",
                                   "v_head_dim")} == {"attention": "mla", "kv_lora_rank": 6, "q_lora_rank": 3,
                                                      "rope_head_dim": 2, "nope_head_dim": 5, "v_head_dim": 7}
    quiz = [sys.executable, "-m", "quizzes"]
    for command in (base + ["--rope-head-dim", "3"], quiz + ["--kv-lora-rank", "4"]):
        bad = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_the_views_draw_the_latent_cache_and_say_why_not_where_they_draw_multi_head_attention():
    cfg = tiny()
    view = kv_cache_view(cfg, 3)
    assert view.shape == (cfg.layers, cfg.N, cfg.M + 3, 12 + 4) and view.bytes == kv_cache_bytes(cfg, 3)
    assert view.chosen["attention"] == "MLA (kv_lora_rank + rope_head_dim = 12 + 4)"
    assert view.chosen["bytes"] == view.bytes
    for call in (lambda: rope_view(cfg), lambda: step_through(cfg), lambda: kv_sharing(trace(cfg))):
        with pytest.raises(ValueError, match="attention='mla'"):
            call()


def test_a_slim_pass_gives_the_traces_attention_weights():
    cfg = tiny(q_lora_rank=5)
    weights = slim_attention(cfg, "dec", "self_attn", 1, 1)["dec.1.self_attn.weights"]  # (1, nhead, M, M)
    torch.testing.assert_close(weights, trace(cfg).tensors["dec.1.self_attn.weights"][1:2])


def test_deepseek_v2_lite_counts_as_hugging_faces_model_on_the_meta_device():
    cfg = DEEPSEEK_V2_LITE
    with torch.device("meta"):
        hf = transformers.DeepseekV2ForCausalLM(transformers.DeepseekV2Config(
            vocab_size=102400, hidden_size=2048, intermediate_size=10944, moe_intermediate_size=1408,
            num_hidden_layers=27, num_attention_heads=16, num_key_value_heads=16, n_routed_experts=64,
            n_shared_experts=2, num_experts_per_tok=6, first_k_dense_replace=1, kv_lora_rank=512, q_lora_rank=None,
            qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128))
    ours = Transformer.from_config(cfg, device="meta")
    total = sum(p.numel() for p in hf.parameters())
    assert total == sum(p.numel() for p in ours.parameters()) == param_counts(cfg)["total"] == 15_706_484_224
    assert PUBLISHED_PARAMS["DeepSeek-V2-Lite"][0] == total and real_model(cfg) == "DeepSeek-V2-Lite"


def test_deepseek_v3_counts_as_hugging_faces_model_without_its_routing_bias():
    """HF's DeepSeek-V3 (its default config) holds no multi-token-prediction module; its routers' balancing bias is a
    buffer, not a parameter, and the published count leaves it out as well."""
    cfg = DEEPSEEK_V3
    with torch.device("meta"):
        hf = transformers.DeepseekV3ForCausalLM(transformers.DeepseekV3Config())
    total = sum(p.numel() for p in hf.parameters())
    bias = sum(b.numel() for name, b in hf.named_buffers() if name.endswith("e_score_correction_bias"))
    assert total == param_counts(cfg)["total"] == 671_026_404_352 and bias == (61 - 3) * 256
    assert active_params(cfg) == 37_552_282_624  # the routed experts a token skips, 248 of 256, left out
    assert kv_numbers_per_token(cfg) == 512 + 64 == 576 and cfg.layers * 576 == 35_136
    assert kv_cache_summary(cfg)["bytes_per_token"] == 35_136 * 4


def test_tiny_mla_traces_every_row_at_its_formula():
    t = trace(TINY_MLA)
    assert PART_PRESETS["Tiny MLA (latent attention)"] == TINY_MLA and not t.shape_only
    assert t.row("kv_cache").shape == (TINY_MLA.layers, TINY_MLA.N, TINY_MLA.M, 8 + 4)
    assert all(r.shape == formula_shape(r.formula, TINY_MLA) for r in t.rows + t.extras)
