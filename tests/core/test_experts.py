"""The mixture of experts, head_dim, qk_norm and the sliding window: live shapes equal their formulas for any
valid config, logits equal Hugging Face's Mixtral, Qwen3-MoE and Mistral with copied weights, a cache gives a
full pass's logits at every step, and bad combinations get clear errors. Dev-only: transformers."""

import pytest
import torch
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

from core import Transformer, TransformerConfig, trace
from core.config import TINY_MOE
from core.experts import Experts, even_share
from core.kv_cache import generate
from core.memory import active_params, kv_cache_bytes, param_counts
from core.model import FeedForward, generate_square_subsequent_mask
from core.window import sliding_window_mask
from core.rows import formula_shape


@st.composite
def configs(draw, arch=st.sampled_from(["decoder-only", "encoder-only"])):
    """A small valid one-stack config with any mix of experts, head width, qk_norm and window."""
    family = draw(arch)
    nhead_kv = draw(st.sampled_from([1, 2]))
    nhead = nhead_kv * draw(st.sampled_from([1, 2]))
    E = nhead * draw(st.sampled_from([2, 4]))
    layers = draw(st.integers(1, 3))
    n_experts = draw(st.sampled_from([0, 1, 3, 4]))
    moe = {} if not n_experts else dict(
        n_experts=n_experts, top_k=draw(st.integers(1, n_experts)), n_shared_experts=draw(st.integers(0, 2)),
        d_ff_expert=draw(st.integers(1, 6)), first_dense_layers=draw(st.integers(0, layers - 1)),
        norm_topk=draw(st.booleans()))
    window = draw(st.integers(0, 6)) if family == "decoder-only" else 0
    return TransformerConfig(
        arch=family, N=draw(st.integers(1, 3)), M=draw(st.integers(1, 9)), E=E, nhead=nhead, nhead_kv=nhead_kv,
        vocab_size=draw(st.integers(2, 30)), layers=layers, d_ff=draw(st.integers(1, 8)),
        positional=draw(st.sampled_from(["sinusoidal", "rope", "none"])), norm_first=draw(st.booleans()),
        norm=draw(st.sampled_from(["layernorm", "rmsnorm"])), activation=draw(st.sampled_from(["relu", "swiglu"])),
        bias=draw(st.booleans()), head_dim=draw(st.sampled_from([None, 2, 6])), qk_norm=draw(st.booleans()),
        window=window, global_every=draw(st.sampled_from([0, *range(2, layers + 1)])) if window else 0,
        seed=draw(st.integers(0, 5)),
        **moe)


def tokens_of_expert_0(t) -> int | None:
    """T_e of the shown layer, from the live counts (None on a shape-only pass: the even share stands in)."""
    return None if t.shape_only or not t.config.moe else int(t.value("tokens_per_expert")[0])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_every_rows_live_shape_equals_its_formula(cfg):
    t = trace(cfg)
    assert not t.shape_only
    T_e = tokens_of_expert_0(t)
    for row in t.rows + t.extras:
        assert row.shape == formula_shape(row.formula, cfg, T_e), (row.key, row.formula)
    assert t.params == param_counts(cfg)
    assert t.active_params == active_params(cfg) == t.to_dict()["params"]["active"]
    if cfg.moe:
        counts = t.value("tokens_per_expert")
        assert int(counts.sum()) == cfg.N * cfg.M * cfg.top_k  # every token's top_k choices, counted once
        assert t.to_dict()["moe"]["tokens_per_expert"] == counts.tolist()


@settings(max_examples=15, deadline=None)
@given(configs())
def test_a_shape_only_pass_gives_the_formulas_with_the_even_share(cfg):
    t = trace(cfg, shape_only=True)
    for row in t.rows + t.extras:
        assert row.shape == formula_shape(row.formula, cfg), (row.key, row.formula)
    if cfg.moe:
        moe = t.to_dict()["moe"]
        assert moe == {"tokens_per_expert": None, "known": False,
                       "even_share": cfg.N * cfg.M * cfg.top_k / cfg.n_experts}
        assert t.row("expert_input").shape[0] == even_share(cfg.N * cfg.M, cfg.top_k, cfg.n_experts)


def test_the_experts_output_is_each_tokens_chosen_experts_weighted_and_summed():
    """The gathered, batched computation against the definition, token by token."""
    torch.manual_seed(0)
    E, n_experts, top_k = 6, 4, 2
    moe = Experts(E, n_experts, top_k, 5, lambda E, w: FeedForward(E, w, activation="swiglu", bias=False),
                  activation="swiglu", bias=False, n_shared_experts=1, norm_topk=False)
    x = torch.randn(2, 3, E)  # (N, M, E)
    rec = {}
    with torch.no_grad():
        out = moe(x, rec)
        for n in range(2):
            for m in range(3):
                probs = torch.softmax(moe.router(x[n, m]), -1)  # (n_experts,)
                w, idx = probs.topk(top_k)
                want = sum(w[j] * moe.experts(int(idx[j]), x[n, m]) for j in range(top_k)) + moe.shared(x[n, m])
                torch.testing.assert_close(out[n, m], want)
    assert rec["tokens_per_expert"].sum() == 2 * 3 * top_k
    assert rec["expert0.in"].shape == (int(rec["tokens_per_expert"][0]), E)


# --- Parity with Hugging Face on tiny random configs, weights copied ---

ROPE = {"rope_type": "default", "rope_theta": 10000.0}  # ours; the real models use other bases
BASE = TransformerConfig(arch="decoder-only", N=2, M=9, E=32, nhead=4, nhead_kv=2, d_ff=40, layers=2, vocab_size=60,
                         positional="rope", activation="swiglu", norm="rmsnorm", norm_first=True, bias=False, seed=3)


def ids(cfg: TransformerConfig) -> torch.Tensor:
    return torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M), generator=torch.Generator().manual_seed(1))


def copy_into(hf, ours: Transformer, cfg: TransformerConfig):
    """Our weights into HF's Mixtral-, Qwen3-MoE- or Mistral-shaped model: the router is HF's gate, expert e's
    gate and up stack into gate_up_proj[e], its down is down_proj[e]: both sides keep every expert stacked."""
    m = hf.model
    with torch.no_grad():
        m.embed_tokens.weight.copy_(ours.src_embed.lookup.weight)
        for block, layer in zip(m.layers, ours.decoder):
            for hf_name, name in (("q_proj", "W_q"), ("k_proj", "W_k"), ("v_proj", "W_v"), ("o_proj", "W_o")):
                getattr(block.self_attn, hf_name).weight.copy_(getattr(layer.self_attn, name).weight)
            if cfg.qk_norm:
                nn.init.normal_(layer.self_attn.q_norm.weight)  # gains away from 1, so a missing norm would show
                nn.init.normal_(layer.self_attn.k_norm.weight)
                block.self_attn.q_norm.weight.copy_(layer.self_attn.q_norm.weight)
                block.self_attn.k_norm.weight.copy_(layer.self_attn.k_norm.weight)
            if isinstance(layer.ffn, Experts):
                block.mlp.gate.weight.copy_(layer.ffn.router.weight)
                experts = layer.ffn.experts  # (n_experts, ...) each, as HF's
                block.mlp.experts.gate_up_proj.copy_(torch.cat((experts.W_gate, experts.W_up), dim=1))
                block.mlp.experts.down_proj.copy_(experts.W_down)
            else:
                for hf_name, name in (("gate_proj", "linear1"), ("up_proj", "linear3"), ("down_proj", "linear2")):
                    getattr(block.mlp, hf_name).weight.copy_(getattr(layer.ffn, name).weight)
            nn.init.normal_(layer.norm1.weight)
            nn.init.normal_(layer.norm3.weight)
            block.input_layernorm.weight.copy_(layer.norm1.weight)
            block.post_attention_layernorm.weight.copy_(layer.norm3.weight)
        m.norm.weight.copy_(ours.decoder_norm.weight)
        hf.lm_head.weight.copy_(ours.generator.weight)
    return hf.eval()


def sizes(cfg: TransformerConfig) -> dict:
    return dict(hidden_size=cfg.E, num_hidden_layers=cfg.layers, num_attention_heads=cfg.nhead,
                num_key_value_heads=cfg.nhead_kv, head_dim=cfg.d_k, vocab_size=cfg.vocab_size, rms_norm_eps=1e-5,
                max_position_embeddings=64, rope_parameters=ROPE, attn_implementation="eager")


@torch.no_grad()
def check_parity(cfg: TransformerConfig, hf_config) -> None:
    ours = Transformer.from_config(cfg)
    hf = copy_into(type_for(hf_config)(hf_config), ours, cfg)
    x = ids(cfg)
    mine = ours(None, x, tgt_mask=generate_square_subsequent_mask(cfg.M))  # (N, M, vocab_size)
    torch.testing.assert_close(mine, hf(x).logits, atol=1e-4, rtol=1e-4)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())


def type_for(config):
    return {transformers.MixtralConfig: transformers.MixtralForCausalLM,
            transformers.Qwen3MoeConfig: transformers.Qwen3MoeForCausalLM,
            transformers.MistralConfig: transformers.MistralForCausalLM}[type(config)]


@pytest.mark.parametrize("top_k", [1, 2])
def test_mixtral_logits_match_hugging_face(top_k):
    cfg = BASE.replace(n_experts=4, top_k=top_k, d_ff_expert=24)
    check_parity(cfg, transformers.MixtralConfig(intermediate_size=24, num_local_experts=4, num_experts_per_tok=top_k,
                                                 **sizes(cfg)))


@pytest.mark.parametrize("norm_topk", [True, False])
def test_qwen3_moe_logits_match_hugging_face_with_qk_norm_and_head_dim(norm_topk):
    cfg = BASE.replace(n_experts=6, top_k=3, d_ff_expert=16, head_dim=12, qk_norm=True, norm_topk=norm_topk)
    assert cfg.d_k != cfg.E // cfg.nhead
    check_parity(cfg, transformers.Qwen3MoeConfig(
        intermediate_size=cfg.d_ff, moe_intermediate_size=16, num_experts=6, num_experts_per_tok=3,
        norm_topk_prob=norm_topk, **sizes(cfg)))


def test_mistral_logits_match_hugging_face_with_a_window_shorter_than_the_sequence():
    """HF's window (masking_utils.sliding_window_overlay: key j seen when j > i - window) is ours: a query sees
    the last `window` positions, itself included."""
    cfg = BASE.replace(window=3)
    assert cfg.window < cfg.M
    check_parity(cfg, transformers.MistralConfig(intermediate_size=cfg.d_ff, sliding_window=3, **sizes(cfg)))
    with pytest.raises(AssertionError):  # a window one wider would differ: the check can tell
        check_parity(cfg, transformers.MistralConfig(intermediate_size=cfg.d_ff, sliding_window=4, **sizes(cfg)))


# --- The cache: a windowed layer keeps at most `window` positions, and the logits equal a full pass ---

@pytest.mark.parametrize("parts", [
    dict(n_experts=4, top_k=2, n_shared_experts=1, first_dense_layers=1),  # MoE
    dict(window=3),  # a window shorter than the sequence, every layer
    dict(window=2, global_every=2, layers=3, qk_norm=True, head_dim=6),  # windowed and full layers mixed
], ids=["moe", "window", "window-and-global"])
@torch.no_grad()
def test_cached_logits_equal_a_full_pass_at_every_step(parts):
    cfg = BASE.replace(M=5, **parts)
    G = 6
    model = Transformer.from_config(cfg)
    out = generate(cfg, G, model)
    L = out.tokens.shape[1]  # M + G
    full = model(None, out.tokens, tgt_mask=generate_square_subsequent_mask(L))  # (N, M + G, vocab_size)
    for step, logits in enumerate(out.step_logits):
        torch.testing.assert_close(logits, full[:, cfg.M - 1 + step], atol=1e-5, rtol=1e-5)
    for step, layers in enumerate(out.cache_shapes):  # each (K, V) of (N, nhead_kv, held, d_k)
        for i, (k, v) in enumerate(layers):
            held = min(cfg.M + step, cfg.window) if cfg.windowed(i) else cfg.M + step
            assert k == v == (cfg.N, cfg.nhead_kv, held, cfg.d_k)
    held = sum(min(cfg.M + G, cfg.window) if cfg.windowed(i) else cfg.M + G for i in range(cfg.layers))
    assert kv_cache_bytes(cfg, G) == 2 * held * cfg.N * cfg.nhead_kv * cfg.d_k * 4


def test_json_reports_a_tokens_kv_cache_bytes_and_the_windowed_shapes():
    cfg = BASE.replace(M=7, window=3, global_every=2, layers=4)
    kv = trace(cfg).to_dict()["kv_cache"]
    per_token = 2 * 4 * cfg.nhead_kv * cfg.d_k
    assert kv["shape"] == [2, 2, cfg.N, cfg.nhead_kv, 3, cfg.d_k]  # layers 1 and 3 (from 1) are windowed
    assert kv["shape_global"] == [2, 2, cfg.N, cfg.nhead_kv, 7, cfg.d_k]
    assert kv["bytes_per_token"] == 4 * per_token and kv["bytes_per_token_fp16"] == 2 * per_token
    assert kv["bytes"] == 4 * 2 * cfg.N * cfg.nhead_kv * cfg.d_k * (3 + 7 + 3 + 7)
    assert trace(cfg).value("windowed_layers").tolist() == [True, False, True, False]


def test_the_tiny_moe_reads_its_counts_and_a_dense_model_is_all_active():
    t = trace(TINY_MOE)
    assert not t.shape_only and t.params["experts"] > 0 and t.params["shared experts"] > 0
    assert t.row("router_logits").hook == "dec.1.ffn.router_logits"  # layer 0 keeps its dense FFN
    assert t.row("ffn_hidden").shape == (TINY_MOE.N, TINY_MOE.M, TINY_MOE.d_ff)
    dense = trace(TINY_MOE.replace(n_experts=0))
    assert dense.to_dict()["params"]["active"] == dense.params["total"] and "experts" not in dense.params


# --- Clear errors ---

@pytest.mark.parametrize("fields, message", [
    (dict(arch="decoder-only", n_experts=2, top_k=3), r"top_k=3 .* n_experts=2; lower top_k or raise n_experts"),
    (dict(top_k=2), r"top_k=2 is set but n_experts=0, .* set n_experts, or leave top_k out"),
    (dict(d_ff_expert=8), r"d_ff_expert=8 is set but n_experts=0"),
    (dict(n_shared_experts=1), r"n_shared_experts=1 is set but n_experts=0"),
    (dict(norm_topk=False), r"norm_topk=False is set but n_experts=0"),
    (dict(arch="decoder-only", n_experts=4, first_dense_layers=2),
     r"first_dense_layers=2 .* at least one of the layers=2"),
    (dict(arch="decoder-only", n_experts=-1), r"n_experts=-1 .* 0 is a dense FFN"),
    (dict(arch="encoder-only", window=4), r"window=4 is for a causal stack; arch='encoder-only'.*window=0"),
    (dict(window=4), r"window=4 .* arch='encoder-decoder'"),
    (dict(arch="decoder-only", global_every=2), r"global_every=2 .* window=0 .* set window"),
    (dict(arch="decoder-only", window=2, global_every=3), r"global_every=3 is more than layers=2"),
    (dict(arch="decoder-only", window=2, global_every=1), r"global_every=1 keeps every layer full.*global_every=0"),
    (dict(n_experts=2), r"n_experts=2 is not supported for arch='encoder-decoder'.*decoder-only"),
    (dict(head_dim=0), r"head_dim=0 is out of range"),
    (dict(positional="rope", head_dim=3), r"head_dim=3 is odd. Try head_dim=4"),
    (dict(qk_norm=1), r"qk_norm=1 must be True or False"),
    (dict(E=10, nhead=4), r"nhead=4 must divide E=10 .* or give head_dim"),
])
def test_bad_combinations_name_the_field_the_value_and_the_way_out(fields, message):
    with pytest.raises(ValueError, match=message):
        TransformerConfig(**fields)


def test_head_dim_frees_nhead_from_dividing_E_and_follows_E_unless_given():
    assert TransformerConfig(E=10, nhead=4, head_dim=2).d_k == 2
    cfg = TransformerConfig(E=16, nhead=2)
    assert cfg.head_dim == cfg.d_k == 8 and cfg.replace(E=32).d_k == 16
    assert cfg.replace(head_dim=4).replace(E=32).d_k == 4  # a given head_dim stays
    moe = TINY_MOE.replace(d_ff=20)
    assert moe.d_ff_expert == 8 and TINY_MOE.replace(n_experts=0).top_k is None


def test_a_slim_pass_reads_a_windowed_layers_map_under_its_band():
    """core.slim runs one layer at a time: a windowed layer gets its band mask there too, and experts route each
    token on its own, so one sequence alone gets the weights it has in the whole batch."""
    from core.slim import slim_attention

    cfg = BASE.replace(M=7, window=3, global_every=2, layers=2, n_experts=4, top_k=2)
    whole = trace(cfg)
    for layer in (0, 1):  # windowed, then full
        slim = slim_attention(cfg, "dec", "self_attn", layer, 1)[f"dec.{layer}.self_attn.weights"]  # (1, nhead, M, M)
        torch.testing.assert_close(slim[0], whole.tensors[f"dec.{layer}.self_attn.weights"][1])
    blocked = whole.tensors["dec.0.self_attn.weights"][0, 0] == 0  # (M, M)
    assert torch.equal(blocked, sliding_window_mask(7, 7, 3))


def test_replace_carries_the_parts_to_another_family_and_fewer_layers():
    """The quiz runs a config as other families and at capped sizes: parts a family lacks are dropped, and a
    global_every past the last layer becomes 0, which windows the same layers."""
    cfg = TINY_MOE.replace(window=3, global_every=3)
    assert cfg.replace(layers=2).global_every == 0 and cfg.replace(layers=1).first_dense_layers == 0
    assert cfg.replace(arch="encoder-only").window == 0 and cfg.replace(arch="encoder-only").n_experts == 8
    assert cfg.replace(arch="encoder-decoder").n_experts == 0 and cfg.replace(arch="encoder-decoder").top_k is None
    assert [cfg.windowed(i) for i in range(3)] == [True, True, False]
