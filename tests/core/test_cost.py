"""core.cost: the exact figures learners check, and every formula against the model's own pass."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import cost
from core.config import LLAMA2_70B, TransformerConfig


def test_korthikanti_activations_of_a_gpt_layer_at_h4096_a32_s4096():
    s, b, h, a = 4096, 1, 4096, 32
    assert cost.layer_activation_bytes(s, b, h, a).value == 3_254_779_904
    assert cost.layer_activation_bytes(s, b, h, a, recompute="selective").value == 570_425_344
    assert cost.layer_activation_bytes(s, b, h, a, recompute="full").value == 33_554_432
    assert cost.layer_activation_bytes(s, b, h, a, flash=True).value == 570_425_344


def test_chinchilla_optimum_of_70_billion_parameters():
    tokens = cost.chinchilla_tokens(70 * 10**9)
    assert tokens.value == 1_400_000_000_000
    assert cost.training_flops(70 * 10**9, tokens.value).value == pytest.approx(5.88e23, rel=1e-12)


def test_llama_2_70b_weights_in_bf16():
    p = cost.param_count(LLAMA2_70B)
    assert p.total == 68_976_648_192
    assert cost.weight_bytes(p.total, "bf16").value == 137_953_296_384


def test_mixed_precision_adam_is_16_bytes_a_parameter_and_zero_divides_the_states():
    assert cost.training_state_bytes(1).value == 16
    assert cost.training_state_bytes(1, "mixed-precision 8-bit Adam").value == 10
    assert cost.training_state_bytes(8, zero_stage=1, data_parallel=4).value == 8 * (2 + 2 + 12 / 4)
    assert cost.training_state_bytes(8, zero_stage=3, data_parallel=4).value == 8 * 16 / 4


@pytest.mark.parametrize("call, field", [
    (lambda: cost.training_state_bytes(1, "sgd"), "optimizer='sgd'"),
    (lambda: cost.training_state_bytes(1, zero_stage=4), "zero_stage=4"),
    (lambda: cost.weight_bytes(1, "fp8"), "precision='fp8'"),
    (lambda: cost.gpu_hours(1, 1, 0), "mfu=0"),
    (lambda: cost.gpu("Voodoo 2"), "gpu='Voodoo 2'"),
    (lambda: cost.CostSettings(batch=0), "batch=0"),
    (lambda: cost.layer_activation_bytes(1, 1, 1, 1, recompute="some"), "recompute='some'"),
])
def test_a_bad_choice_names_itself(call, field):
    with pytest.raises(ValueError, match=field.replace("(", r"\(")):
        call()


def test_every_gpu_names_its_datasheet():
    table = cost.gpus()
    assert len(table) >= 5
    for g in table:
        assert g.memory_bytes > 0 and g.bandwidth > 0 and g.bf16_flops > 0
        assert "datasheet" in g.source.lower() or "whitepaper" in g.source.lower()


def test_decode_bound_and_crossover_meet():
    W, c, F, bw, peak = 1.4e11, 1.3e9, 1.4e11, 3.35e12, 9.89e14
    b = cost.crossover_batch(W, c, F, bw, peak).value
    assert (W + b * c) / bw == pytest.approx(b * F / peak)
    assert cost.decode_bound(W, 0, 1, bw).value == pytest.approx(bw / W)


@st.composite
def small_configs(draw):
    """Any family and mix of parts, small enough to run."""
    nhead_kv = draw(st.sampled_from([1, 2]))
    nhead = nhead_kv * draw(st.sampled_from([1, 2]))
    arch = draw(st.sampled_from(["encoder-decoder", "decoder-only", "encoder-only"]))
    M = draw(st.integers(1, 7))
    return TransformerConfig(
        arch=arch, N=draw(st.integers(1, 3)), M=M, M_target=draw(st.integers(1, 7)) if arch == "encoder-decoder" else None,
        E=nhead * draw(st.sampled_from([2, 4])), nhead=nhead, nhead_kv=nhead_kv, vocab_size=draw(st.integers(2, 20)),
        layers=draw(st.integers(1, 3)), d_ff=draw(st.integers(1, 10)),
        positional=draw(st.sampled_from(["sinusoidal", "learned", "rope", "none"])),
        norm_first=draw(st.booleans()), norm=draw(st.sampled_from(["layernorm", "rmsnorm"])),
        activation=draw(st.sampled_from(["relu", "gelu", "swiglu"])), bias=draw(st.booleans()),
        tie_embeddings=draw(st.booleans()))


# The pass formula counts every matrix multiply, so it must equal PyTorch's counter exactly; the rule of
# thumb (2 FLOPs a parameter) differs from it by what no matrix multiply touches.
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_configs())
def test_the_flop_counter_equals_the_pass_formula_exactly(cfg):
    assert cost.counted_flops(cfg) == cost.pass_flops(cfg).value


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_configs().filter(lambda c: c.arch != "encoder-decoder"))
def test_rule_of_thumb_less_the_unmultiplied_parameters_is_the_counted_flops_per_token(cfg):
    per_token = cost.counted_flops(cfg) / (cfg.N * cfg.M)
    assert cost.flops_rule_of_thumb(cfg).value - cost.uncounted_flops(cfg).value == per_token


# An encoder-decoder's token is a source and a target token: the rule of thumb's attention term reads the same
# keys as flops_per_token's, so it exceeds that count by the parameters no matrix multiply touches, never less.
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_configs().filter(lambda c: c.arch == "encoder-decoder"))
def test_an_encoder_decoders_rule_of_thumb_exceeds_its_flops_per_token_by_the_unmultiplied(cfg):
    per_token = cost.flops_per_token(cfg)["total"].value
    uncounted = cost.uncounted_flops(cfg).value
    assert uncounted >= 0
    assert cost.flops_rule_of_thumb(cfg).value - uncounted == per_token


def test_the_counter_runs_on_the_meta_device_at_llama_2_70b():
    cfg = LLAMA2_70B.replace(N=1, M=16)
    assert cost.counted_flops(cfg) == cost.pass_flops(cfg).value == 2_199_493_017_600


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_configs().filter(lambda c: c.arch != "encoder-decoder" and c.positional != "rope"))
def test_saved_for_backward_bytes_equal_our_models_own_count(cfg):
    assert cost.saved_activation_bytes(cfg) == cost.expected_saved_bytes(cfg).value


def test_the_exact_saved_count_says_where_it_stops():
    with pytest.raises(ValueError, match="positional=rope is measured only"):
        cost.expected_saved_bytes(TransformerConfig(arch="decoder-only", positional="rope"))


def test_report_of_a_small_model_has_its_live_checks_and_a_large_one_its_counter():
    small = cost.cost_report(TransformerConfig(arch="decoder-only"))
    assert small.live["counted_flops"] == small.live["formula_flops"]
    assert small.live["saved_bytes"] == small.live["expected_saved_bytes"] is not None
    large = cost.cost_report(LLAMA2_70B.replace(N=1, M=16))
    assert large.live["saved_bytes"] is None and large.live["counted_flops"] == large.live["formula_flops"]
    assert large.inference["weights, bf16"].value == 137_953_296_384
    assert large.to_dict()["params"]["total"] == 68_976_648_192


def test_full_fine_tuning_of_mixtral_at_16_bytes_a_parameter():
    from core.config import MIXTRAL_8X7B

    p = cost.param_count(MIXTRAL_8X7B)
    assert (p.total, p.active) == (46_702_792_704, 12_879_925_248)
    assert cost.training_state_bytes(p.total).value == 747_244_683_264


def test_kv_cache_a_token_of_mixtral_in_bf16_and_of_deepseek_v3s_latents():
    from core.config import DEEPSEEK_V3, MIXTRAL_8X7B

    assert cost.kv_cache_bytes(MIXTRAL_8X7B, context=1, batch=1).value == 131_072
    assert cost.kv_cache_bytes(DEEPSEEK_V3, context=1, batch=1, bytes_per_number=1).value == 35_136


def test_a_window_caps_the_cache_of_its_layers():
    cfg = TransformerConfig(arch="decoder-only", E=16, nhead=2, layers=4, window=8, global_every=2)
    short, long = (cost.kv_cache_bytes(cfg, context=c, batch=1).value for c in (8, 1008))
    per_layer_token = 2 * cfg.nhead_kv * cfg.d_k * 2
    assert long - short == 2 * 1000 * per_layer_token  # only the two full layers keep growing


@st.composite
def part_configs(draw):
    """A small decoder-only model with experts, latent attention, a window, head_dim or qk_norm."""
    attention = draw(st.sampled_from(["mha", "mla"]))
    parts = {}
    if attention == "mla":
        parts = dict(attention="mla", positional="rope", kv_lora_rank=draw(st.integers(1, 6)),
                     q_lora_rank=draw(st.integers(0, 5)), rope_head_dim=draw(st.sampled_from([2, 4])),
                     nope_head_dim=draw(st.integers(1, 4)), v_head_dim=draw(st.integers(1, 4)))
    else:
        parts = dict(head_dim=draw(st.sampled_from([None, 2, 6])), qk_norm=draw(st.booleans()))
    layers = draw(st.integers(1, 3))
    if draw(st.booleans()):
        n_experts = draw(st.integers(1, 5))
        parts |= dict(n_experts=n_experts, top_k=draw(st.integers(1, n_experts)),
                      d_ff_expert=draw(st.integers(1, 6)), n_shared_experts=draw(st.integers(0, 2)),
                      first_dense_layers=draw(st.integers(0, layers - 1)))
    if attention == "mha" and draw(st.booleans()):
        parts |= dict(window=draw(st.integers(1, 5)))
    return TransformerConfig(arch="decoder-only", N=draw(st.integers(1, 2)), M=draw(st.integers(1, 7)), E=8, nhead=2,
                             vocab_size=draw(st.integers(2, 20)), layers=layers, d_ff=draw(st.integers(1, 8)),
                             activation=draw(st.sampled_from(["relu", "swiglu"])), bias=draw(st.booleans()),
                             **parts)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(part_configs())
def test_the_counter_equals_the_formula_with_experts_latents_and_windows(cfg):
    assert cost.counted_flops(cfg) == cost.pass_flops(cfg).value
    per_token = cost.counted_flops(cfg) / (cfg.N * cfg.M)
    assert cost.flops_rule_of_thumb(cfg).value - cost.uncounted_flops(cfg).value == per_token
