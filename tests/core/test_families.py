"""The decoder-only and encoder-only families: rows read off the live pass equal their formulas for any
valid config, a decoder-only model never looks ahead, and shape-only passes work for every family."""

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import TransformerConfig, trace
from core.memory import param_counts
from core.rows import DECODER_ONLY_ROWS, ENCODER_ONLY_ROWS, ROWS, formula_shape
from core.model import Transformer, generate_square_subsequent_mask


@st.composite
def configs(draw, arch=st.sampled_from(["encoder-decoder", "decoder-only", "encoder-only"])):
    """A small valid config of any family, with any mix of the variants."""
    nhead_kv = draw(st.sampled_from([1, 2, 4]))
    nhead = nhead_kv * draw(st.sampled_from([1, 2]))
    d_k = draw(st.sampled_from([2, 4]))
    family = draw(arch)
    M = draw(st.integers(1, 9))
    M_target = draw(st.integers(1, 9)) if family == "encoder-decoder" else None
    return TransformerConfig(
        arch=family, N=draw(st.integers(1, 3)), M=M, E=nhead * d_k, nhead=nhead, nhead_kv=nhead_kv,
        vocab_size=draw(st.integers(2, 30)), layers=draw(st.integers(1, 3)), d_ff=draw(st.integers(1, 12)),
        M_target=M_target, positional=draw(st.sampled_from(["sinusoidal", "learned", "rope", "none"])),
        max_len=max(M, M_target or M) + draw(st.integers(0, 3)),
        norm_first=draw(st.booleans()), norm=draw(st.sampled_from(["layernorm", "rmsnorm"])),
        activation=draw(st.sampled_from(["relu", "gelu", "swiglu"])), bias=draw(st.booleans()),
        tie_embeddings=draw(st.booleans()), seed=draw(st.integers(0, 5)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_every_rows_live_shape_equals_its_formula(cfg):
    t = trace(cfg)
    assert not t.shape_only
    for row in t.rows + t.extras:
        assert row.shape == formula_shape(row.formula, cfg), (row.key, row.formula)
    assert [r.index for r in t.rows] == list(range(1, len(t.rows) + 1))
    assert torch.isfinite(t.tensors["probs"]).all()


@settings(max_examples=15, deadline=None)
@given(configs())
def test_a_shape_only_pass_gives_the_same_shapes_as_a_real_one(cfg):
    real, meta = trace(cfg), trace(cfg, shape_only=True)
    assert meta.shape_only and not meta.tensors
    assert [(r.key, r.shape) for r in meta.rows + meta.extras] == [(r.key, r.shape) for r in real.rows + real.extras]


@settings(max_examples=25, deadline=None)
@given(configs())
def test_parameters_counted_from_the_module_equal_the_formulas(cfg):
    assert trace(cfg).params == param_counts(cfg)


@settings(max_examples=20, deadline=None)
@given(configs(arch=st.just("decoder-only")), st.data())
def test_a_decoder_only_model_never_looks_ahead(cfg, data):
    """Changing the token at position p leaves every logit before p as it was, and changes position p's."""
    model = Transformer.from_config(cfg)
    ids = torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M), generator=torch.Generator().manual_seed(cfg.seed))
    p = data.draw(st.integers(0, cfg.M - 1))
    changed = ids.clone()
    changed[:, p] = (changed[:, p] + 1) % cfg.vocab_size
    mask = generate_square_subsequent_mask(cfg.M)
    with torch.no_grad():
        before, after = model(None, ids, tgt_mask=mask), model(None, changed, tgt_mask=mask)  # (N, M, vocab_size)
    torch.testing.assert_close(after[:, :p], before[:, :p], rtol=0, atol=0)


def test_an_encoder_only_model_sees_both_ways():
    cfg = TransformerConfig(arch="encoder-only", N=1, M=6, E=8, nhead=2, vocab_size=20, seed=1)
    model = Transformer.from_config(cfg)
    ids = torch.arange(2, 8).unsqueeze(0)  # (1, M)
    changed = ids.clone()
    changed[0, -1] = 9
    with torch.no_grad():
        assert not torch.allclose(model(ids)[:, 0], model(changed)[:, 0])  # the first position sees the last


def test_each_family_has_its_rows_in_pass_order():
    dec = trace(TransformerConfig(arch="decoder-only", positional="rope", nhead=2, nhead_kv=1))
    assert [r.key for r in dec.rows] == [
        "input_tokens", "token_embedding", "rotation_table", "summed_embedding", "q_one_head", "kv_one_head",
        "attention_scores", "head_output", "concatenated_heads", "ffn_input", "ffn_hidden", "ffn_output",
        "final_output", "logits", "output_probabilities"]
    assert dec.row("rotation_table").shape == (8, 8) and dec.row("k_stacked").shape == (2, 1, 8, 8)
    assert dec.row("kv_head_of_query").shape == (2,)
    assert dec.tensors["dec.0.self_attn.kv_head"].tolist() == [0, 0]
    assert dec.row("causal_mask").shape == (8, 8)
    enc = trace(TransformerConfig(arch="encoder-only", positional="none"))
    assert "positional_encoding" not in [r.key for r in enc.rows] and len(enc.rows) == 14
    assert enc.row("output_probabilities").shape == (2, 8, 100)
    assert len(ROWS) == 14 and len(DECODER_ONLY_ROWS) == len(ENCODER_ONLY_ROWS) == 15


def test_extras_show_swiglu_gate_and_up_and_the_norm_statistics():
    cfg = TransformerConfig(arch="decoder-only", activation="swiglu", norm="rmsnorm", norm_first=True, d_ff=24)
    t = trace(cfg)
    assert t.row("swiglu_gate").shape == t.row("swiglu_up").shape == (2, 8, 24)
    hidden = torch.nn.functional.silu(t.tensors["dec.0.ffn.gate"]) * t.tensors["dec.0.ffn.up"]
    torch.testing.assert_close(t.tensors["dec.0.ffn.hidden"], hidden)
    x = t.tensors["tgt.sum"]  # pre-norm: the first norm reads the layer's input
    torch.testing.assert_close(t.tensors["dec.0.norm_rms"], x.pow(2).mean(-1).sqrt())
    ln = trace(cfg.replace(norm="layernorm", activation="relu"))
    assert ln.row("norm_mean").shape == ln.row("norm_std").shape == (2, 8)


def test_the_encoder_decoder_default_shows_the_seeds_rows_and_extras_unchanged():
    from core.rows import EXTRAS
    t = trace(TransformerConfig())
    assert [r.key for r in t.rows] == [r.key for r in ROWS] and [r.key for r in t.extras] == [r.key for r in EXTRAS]
    assert [r.formula for r in t.rows + t.extras] == [r.formula for r in ROWS + EXTRAS]


def test_the_code_shown_for_each_familys_rows_is_python_from_the_model():
    import ast

    for cfg in (TransformerConfig(arch="decoder-only", activation="swiglu", positional="rope", norm_first=True),
                TransformerConfig(arch="encoder-only", positional="learned", norm="rmsnorm")):
        t = trace(cfg)
        for row in t.rows:
            assert row.code.startswith("# core/model.py") and "record(rec" in row.code, row.key
            ast.parse(row.code.partition("\n")[2])
        for key in ("swiglu_gate", "swiglu_up"):
            if cfg.activation == "swiglu":
                assert "FeedForward.activate" in t.row(key).code


def test_the_memory_curve_runs_for_a_single_stack():
    from core.views import memory_curve

    points, crossover = memory_curve(TransformerConfig(arch="decoder-only", E=32, nhead=4))
    assert points and crossover is not None
    assert all(a.attention < b.attention for a, b in zip(points, points[1:]))
