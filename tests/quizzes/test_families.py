"""The questions on the families and the later parts: which family sees which question, and their answers
against core's exact counts, a real KV cache and the live model."""

import pytest
import torch

from core import TransformerConfig
from core.config import ARCHS, GPT2_SMALL, LLAMA2_7B, LLAMA2_70B
from core.memory import FP16_BYTES, kv_cache_bytes, param_counts
from core.model import FeedForward, MultiHeadAttention
from core.positions import apply_rope, rope_angles
from quizzes import BY_ID, QUESTIONS, TOPICS, check, questions_for
from quizzes.bank import applying_text, other_parts_text
from quizzes.experiments import run
from quizzes.experiments.norms import pre_post_gradient

from .conftest import ALL_CONFIGS, CONFIG_A, DECODER_A, DECODER_B, ENCODER_B, context

NEW_TOPICS = ("Architecture families", "Grouped-query attention", "KV cache", "Rotary positions (RoPE)",
              "Norms: where and which", "SwiGLU")
NEW = [q for q in QUESTIONS if q.topic in NEW_TOPICS]
NEW_EXPERIMENTS = ("family_parts", "family_reach", "part_counts", "kv_sharing", "kv_cache", "rope_probe",
                   "norm_compare", "pre_post_gradient")


def test_at_least_twenty_new_questions_twelve_of_them_parametric():
    assert set(NEW_TOPICS) <= set(TOPICS)
    assert len(NEW) >= 20 and sum(q.parametric for q in NEW) >= 12
    assert all(q.explanation.strip() and q.evidence in NEW_EXPERIMENTS + ("pass_shapes",) for q in NEW)


def test_each_family_is_asked_only_about_its_own_model():
    """The decoder-only quiz has no question on cross-attention, M_target or the source; the paper's has none on
    a decoder-only model's KV cache; and a question limited to one family appears in that family alone."""
    for arch in ARCHS:
        cfg = next(c for c in ALL_CONFIGS if c.arch == arch)
        ids = {q.id for q in questions_for(None, cfg)}
        assert ids == {q.id for q in QUESTIONS if arch in q.families and (q.when is None or q.when(cfg))}
    decoder = {q.id for q in questions_for(None, DECODER_A)}
    paper = {q.id for q in questions_for(None, CONFIG_A)}
    assert not {"shape-cross", "shape-target", "mask-blocked", "shift-targets", "fam-reach-encoder"} & decoder
    assert {"fam-gone", "fam-reach-decoder", "kv-shape", "kv-bytes", "gqa-k-shape", "rope-table"} <= decoder
    assert not {"fam-gone", "kv-shape", "fam-target", "rope-table", "swiglu-gate"} & paper
    assert {"shape-cross", "mask-blocked", "gqa-group", "norm-count", "rope-pairs", "swiglu-params"} <= paper
    assert "fam-reach-encoder" in {q.id for q in questions_for(None, ENCODER_B)}
    assert questions_for("KV cache", CONFIG_A) == [] and len(questions_for("KV cache", DECODER_A)) == 5


def test_questions_on_the_papers_parts_leave_a_model_without_them():
    """'ReLU between the two layers' is wrong for SwiGLU, '4E² + 4E' for GQA and '5·layers LayerNorms' for RMSNorm:
    those questions are not shown there, and come back with the paper's parts."""
    llama_like = {q.id for q in questions_for(None, DECODER_A)}
    assert not {"ffn-activation", "ffn-params", "dk-attn-params", "params-qkv", "skip-why", "pos-sum"} & llama_like
    plain = {q.id for q in questions_for(None, CONFIG_A)}
    assert {"ffn-activation", "ffn-params", "dk-attn-params", "params-qkv", "skip-why", "pos-sum"} <= plain


def test_the_page_says_how_many_questions_the_family_has():
    n = len(questions_for(None, DECODER_A))
    assert applying_text(DECODER_A) == f"{n} of {len(QUESTIONS)} questions apply to decoder-only."
    in_family = sum("decoder-only" in q.families for q in QUESTIONS)
    assert other_parts_text(DECODER_A).startswith(
        f"{in_family - n} more of the decoder-only family's questions ask about parts this model does not have")


def test_the_seed_notes_llama_claim_is_put_right_by_the_live_count():
    """The note: E=8192 'leading to 200M parameters just on 1 attention mechanism'. Three full E x E matrices are
    201.3M (params-llama-qkv asks for that); the real model's W^K and W^V have 8 K/V heads: 83.9M, as core counts."""
    ctx = context(DECODER_A)
    real = BY_ID["gqa-llama-qkv"].expected(ctx)
    assert real == round((LLAMA2_70B.E ** 2 + 2 * LLAMA2_70B.E * LLAMA2_70B.nhead_kv * LLAMA2_70B.d_k) / 1e6, 1) == 83.9
    assert BY_ID["params-llama-qkv"].expected(ctx) == 201.3
    assert check(BY_ID["gqa-llama-qkv"], real, "83.9") and not check(BY_ID["gqa-llama-qkv"], real, "200")
    per_layer = param_counts(LLAMA2_70B)["self-attention"] // LLAMA2_70B.layers
    assert ctx.value("part_counts", "llama_qkv") + LLAMA2_70B.E ** 2 == per_layer  # plus W^O: core's own count
    total = BY_ID["gqa-llama-total"].expected(ctx)
    assert total == param_counts(LLAMA2_70B)["total"] == 68_976_648_192
    assert check(BY_ID["gqa-llama-total"], total, "69.0B") and check(BY_ID["gqa-llama-total"], total, "68,976,648,192")
    assert not check(BY_ID["gqa-llama-total"], total, "70B")
    assert BY_ID["swiglu-llama"].expected(ctx) == round(param_counts(LLAMA2_7B)["FFN"] / LLAMA2_7B.layers / 1e6, 1)


@pytest.mark.parametrize("cfg", [DECODER_A, DECODER_B, ENCODER_B, CONFIG_A, GPT2_SMALL, LLAMA2_70B],
                         ids=["Llama-like", "MQA", "BERT-like", "paper", "GPT-2 small", "Llama-2-70B"])
def test_the_counts_agree_with_cores_exact_formulas(cfg):
    ctx = context(cfg)
    counts = param_counts(cfg)
    attn = counts["self-attention"] if cfg.arch != "encoder-decoder" else counts["encoder self-attention"]
    assert BY_ID["gqa-params"].expected(ctx) == attn // cfg.layers
    mha = param_counts(cfg.replace(nhead_kv=cfg.nhead))
    mha_attn = mha["self-attention"] if cfg.arch != "encoder-decoder" else mha["encoder self-attention"]
    assert BY_ID["gqa-saved"].expected(ctx) == (mha_attn - attn) // cfg.layers
    if cfg.activation == "swiglu":
        ffn = counts["FFN"] if cfg.arch != "encoder-decoder" else counts["encoder FFN"]
        assert BY_ID["swiglu-params"].expected(ctx) == ffn // cfg.layers
    assert BY_ID["norm-rms-params"].expected(ctx) == cfg.E and BY_ID["norm-ln-params"].expected(ctx) == 2 * cfg.E
    assert BY_ID["gqa-group"].expected(ctx) == cfg.nhead // cfg.nhead_kv
    if cfg.arch != "encoder-decoder":
        paper = param_counts(cfg.replace(arch="encoder-decoder", M_target=None))["total"]
        assert BY_ID["fam-fewer"].expected(ctx) == paper - counts["total"]
    if cfg.arch == "decoder-only":
        assert BY_ID["kv-bytes"].expected(ctx) == kv_cache_bytes(cfg, bytes_per_number=FP16_BYTES)
        assert BY_ID["kv-saved"].expected(ctx) == (kv_cache_bytes(cfg, bytes_per_number=FP16_BYTES, nhead_kv=cfg.nhead)
                                                   - kv_cache_bytes(cfg, bytes_per_number=FP16_BYTES))
        assert BY_ID["kv-shape"].expected(ctx) == (cfg.layers, 2, cfg.N, cfg.nhead_kv, cfg.M, cfg.d_k)


def test_llama_2_70bs_cache_for_4096_tokens():
    """1.25 GiB in fp16 for one sequence, 8 times less than with 64 K/V heads: core's formula says the same."""
    ctx = context(DECODER_A)
    assert BY_ID["kv-llama"].expected(ctx) == 1280.0
    full = LLAMA2_70B.replace(N=1, M=4096)
    assert kv_cache_bytes(full, bytes_per_number=FP16_BYTES) == 1280 * 2**20
    assert ctx.value("kv_cache", "llama_mha_mib") == 8 * 1280.0


def test_a_real_cached_generation_agrees_with_full_passes_and_the_check_would_see_a_difference():
    ev = run("kv_cache", DECODER_B).values
    assert ev["agree"] and 0 <= ev["max_difference"] <= 1e-5 and ev["steps"] == 4
    assert BY_ID["kv-agree"].expected(context(DECODER_B)) == BY_ID["kv-agree"].choices[0]


def test_gqa_sharing_is_measured_on_the_heads():
    """The heads that move when K/V head 0 changes are the first group, nhead / nhead_kv of them, in MHA, GQA
    and MQA alike; with one K/V head, all of them."""
    for nhead, nhead_kv in ((4, 4), (8, 2), (6, 1), (256, 16)):
        cfg = TransformerConfig(E=nhead * 2, nhead=nhead, nhead_kv=nhead_kv)
        v = run("kv_sharing", cfg).values
        assert v["query_heads_moved"] == list(range(nhead // nhead_kv)) and v["mqa_group"] == nhead
        assert v["layout"] == ("MHA" if nhead_kv == nhead else "MQA" if nhead_kv == 1 else "GQA")
    # The same attention block, read directly: K has nhead_kv heads.
    mha = MultiHeadAttention(16, 8, nhead_kv=2)
    rec = {}
    mha(torch.zeros(1, 3, 16), torch.zeros(1, 3, 16), rec=rec)
    assert tuple(rec["k"].shape) == (1, 2, 3, 2)


def test_rope_turns_q_and_k_only_adds_no_parameters_and_depends_on_the_offset():
    for cfg in (CONFIG_A, DECODER_A, ENCODER_B, TransformerConfig(E=9, nhead=3, layers=1)):
        v = run("rope_probe", cfg).values
        assert (v["q_turned"], v["k_turned"], v["v_turned"], v["input_changed"]) == (True, True, False, False)
        assert v["rope_parameters"] == 0 and v["relative"] and v["added_shift_difference"] > 0.1
    # The property itself, on core's functions: (i, j) and (i + s, j + s) give one q·k.
    angles = rope_angles(40, 8)
    q, k = torch.randn(8, generator=torch.Generator().manual_seed(1)), torch.randn(8)
    base = apply_rope(q, angles[3]) @ apply_rope(k, angles[9])
    torch.testing.assert_close(apply_rope(q, angles[3 + 20]) @ apply_rope(k, angles[9 + 20]), base)
    assert BY_ID["rope-pairs"].expected(context(DECODER_B)) == DECODER_B.d_k // 2


def test_rmsnorm_drops_the_mean_and_the_bias():
    v = run("norm_compare", DECODER_A).values
    assert v["rmsnorm_parts"] == "weight (16)" and v["layernorm_parts"] == "weight (16), bias (16)"
    assert v["layernorm_output_mean"] < 1e-5 < 0.5 < v["rmsnorm_output_mean"]
    assert BY_ID["norm-drops"].expected(context(DECODER_A)) == BY_ID["norm-drops"].choices[0]


def test_swiglu_has_three_matrices():
    ffn = FeedForward(16, 40, activation="swiglu", bias=False)
    assert [n for n, _ in ffn.named_parameters()] == ["linear1.weight", "linear2.weight", "linear3.weight"]
    assert BY_ID["swiglu-matrices"].expected(context(CONFIG_A)) == 3


def test_pre_norm_gets_more_gradient_to_the_embeddings_at_24_layers_over_seeds_and_widths(monkeypatch):
    """What norm-pre-post's explanation says of the paper's parts: at 24 layers pre-norm's gradient at the
    embeddings comes out larger, seed after seed, at several widths (the question itself follows the run).
    One stack each: grad_pre and grad_post are the first stack's."""
    monkeypatch.setattr("quizzes.experiments.norms.PRE_POST_DRAWS", 1)
    for E, nhead in ((8, 2), (16, 2), (64, 8)):
        for seed in range(3):
            v = pre_post_gradient(TransformerConfig(E=E, nhead=nhead, seed=seed)).values
            assert v["depth"] == 24 and v["grad_pre"] > 1.02 * v["grad_post"], (E, seed)


@pytest.mark.parametrize("name", NEW_EXPERIMENTS)
@pytest.mark.parametrize("cfg", [DECODER_A, ENCODER_B, TransformerConfig(N=1, M=1, E=1, nhead=1, vocab_size=2,
                                                                           layers=1), LLAMA2_70B],
                         ids=["Llama-like", "BERT-like", "tiny", "Llama-2-70B"])
def test_the_new_experiments_run_at_every_family_and_name_every_value(name, cfg):
    ev = run(name, cfg)
    assert ev.values and sorted(ev.labels) == sorted(ev.values)
    assert all(0 < len(text) <= 70 for text in ev.labels.values())
    if ev.records:
        fields = {ev.chart[k] for k in ("x", "y", "color", "facet") if k in ev.chart}
        assert fields <= set(ev.records[0])


@pytest.mark.parametrize("arch", ARCHS)
def test_rope_what_at_one_token_still_finds_q_and_k_turned(arch):
    """At M = 1 the only position is 0, whose turn is the identity: the probe runs a second position."""
    cfg = TransformerConfig(arch=arch, N=1, M=1, E=8, nhead=2, vocab_size=10, positional="rope",
                            **({} if arch != "encoder-decoder" else {"M_target": 1}))
    q = BY_ID["rope-what"]
    assert q.expected(context(cfg)) == q.choices[0]
    assert "M=2" in run("rope_probe", cfg).note


def test_rope_what_s_explanation_gives_the_slowest_rate_from_d_k():
    assert "1/10000" not in BY_ID["rope-what"].explanation
    assert "10000^(−(d_k − 2)/d_k)" in BY_ID["rope-what"].explanation
    torch.testing.assert_close(run("rope_probe", TransformerConfig(E=16, nhead=2)).values["slowest_rate"], 1e-3)


def test_pre_against_post_norm_with_llama_s_parts_does_not_follow_the_seed():
    """One seeded stack gave Smaller, Smaller, About, About over seeds 0 to 3; the mean of several does not."""
    q = BY_ID["norm-pre-post"]
    answers = {q.expected(context(DECODER_A.replace(seed=seed))) for seed in range(4)}
    assert answers == {"About the same"}
    # and the band is no wider than the paper's parts need: there pre-norm's still comes out larger
    assert q.expected(context(CONFIG_A)) == q.choices[0]
    assert "With Llama's parts" in q.explanation


def test_the_family_prompts_read_as_english_and_the_fewer_count_names_its_bias_only_when_there_is_one():
    ENCODER = TransformerConfig(arch="encoder-only", N=2, M=8, E=16, nhead=2, vocab_size=100)
    assert " a encoder" not in BY_ID["fam-target"].text(context(ENCODER))
    assert "when the model has biases" in BY_ID["fam-fewer"].explanation
