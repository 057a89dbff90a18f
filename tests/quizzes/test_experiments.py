"""Live experiments: they run at several configs, stay bounded, and show what they claim."""

import inspect
import math
from pathlib import Path

import pytest
import torch

from core import DEFAULT, PAPER_BASE, PAPER_BIG, TransformerConfig, divisors, param_counts, trace
from core.config import LLAMA2_70B
from tests.support.configs import ENC_DEC_AT_GPT3_WIDTHS
from quizzes.experiments import (EXPERIMENTS, MAX_GRU_STEPS, MAX_LEN, MAX_WIDTH, TAKES_SHAPES, Evidence, bounded,
                              run)
from quizzes.experiments.parts import PARTS

# The experiments every config can run; the later parts' own (tests/quizzes/test_parts.py) need their part.
GENERAL = [name for name in EXPERIMENTS if name not in PARTS]


CONFIGS = [
    TransformerConfig(N=2, M=8, E=16, nhead=2, vocab_size=100),
    TransformerConfig(N=3, M=6, M_target=5, E=24, nhead=4, vocab_size=50, layers=3, d_ff=40, positional="learned"),
    TransformerConfig(N=1, M=1, E=1, nhead=1, vocab_size=2, layers=1),
    TransformerConfig(N=1, M=40, M_target=20, E=96, nhead=12, vocab_size=3000, layers=5),
]


@pytest.mark.parametrize("name", GENERAL)
@pytest.mark.parametrize("cfg", CONFIGS, ids=["default", "learned", "tiny", "capped"])
def test_every_experiment_runs(name, cfg):
    ev = run(name, cfg)
    assert isinstance(ev, Evidence) and ev.name == name and ev.title
    assert ev.values
    if ev.records:
        assert ev.chart.get("kind") in ("line", "bar", "heatmap", "table")
        fields = {ev.chart[k] for k in ("x", "y", "color", "facet") if k in ev.chart}
        assert fields <= set(ev.records[0])


@pytest.mark.parametrize("name", GENERAL)
@pytest.mark.parametrize("cfg", [CONFIGS[2], DEFAULT, CONFIGS[1], ENC_DEC_AT_GPT3_WIDTHS],
                         ids=["tiny", "default", "learned", "GPT-3 sizes"])
def test_every_value_has_a_name_a_learner_can_read(name, cfg):
    """The quiz's table of values shows each one under the name its experiment gives it ("gradient
    norm at the embeddings, deepest stack, no skips"), not its key ("grad deepest without"), which a
    learner reported reads like code. A value added without a name fails here, and so does a name
    whose value has gone."""
    ev = run(name, cfg)
    assert sorted(ev.labels) == sorted(ev.values)
    names = list(ev.labels.values())
    assert len(set(names)) == len(names)  # two values under one name could not be told apart
    for key, text in ev.labels.items():
        assert 0 < len(text) <= 70 and text == text.strip(), text  # one line of the table
        assert text not in (key, key.replace("_", " ")), key  # more than the key itself


def test_unknown_experiment():
    with pytest.raises(KeyError, match="unknown experiment"):
        run("nope", CONFIGS[0])


def test_bounded_caps_and_says_so():
    small, note = bounded(ENC_DEC_AT_GPT3_WIDTHS)
    assert small.M <= MAX_LEN and small.E <= MAX_WIDTH and small.layers <= 2 and small.E % small.nhead == 0
    assert "capped" in note
    assert bounded(CONFIGS[0]) == (CONFIGS[0], "")


# The experiments that cap the sizes they run at, or read shapes off the meta device.
CAPPED = ["dependency_maps", "residual_ablation", "causal_probe", "ffn_layers", "learned_positions", "mask_counts",
          "parameter_counts", "batch_first", "attention_shapes"]
# The sliders' widest E with their narrowest d_ff: ffn_layers bounded E * d_ff alone, and built a model
# with 3.6 billion attention weights here (14 GB).
WIDE_E_NARROW_FF = "TransformerConfig(E=12288, nhead=96, d_ff=1)"


@pytest.mark.parametrize("name", CAPPED)
def test_big_configs_stay_small(name):
    """Llama/GPT-3 sizes run through caps or the meta device: real numbers, no big allocation."""
    ev = run(name, ENC_DEC_AT_GPT3_WIDTHS if name != "parameter_counts" else LLAMA2_70B)
    assert ev.values


@pytest.mark.parametrize("sizes", ["ENC_DEC_AT_GPT3_WIDTHS", WIDE_E_NARROW_FF])
def test_big_configs_allocate_little(sizes):
    """The same experiments at those sizes, in a fresh process, measured: together they raise its peak
    memory by well under core's memory budget (62 MiB here at GPT-3's, most of it mask_counts' 2048 x
    2048 masks). Uncapped, one real probe at GPT-3 widths would need terabytes."""
    import subprocess
    import sys

    from core import DEFAULT_BUDGET_BYTES

    code = ("import resource, sys, core\n"
            "from core import TransformerConfig\n"
            "from core.config import LLAMA2_70B\n"
            "from tests.support.configs import ENC_DEC_AT_GPT3_WIDTHS\n"
            "from quizzes.experiments import run\n"
            "run('mask_counts', core.DEFAULT)  # imports and first-use costs, before the measure\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            f"big = {sizes}\n"
            "for name in sys.argv[1:]:\n"
            "    at = LLAMA2_70B if name == 'parameter_counts' and big == ENC_DEC_AT_GPT3_WIDTHS else big\n"
            "    assert run(name, at).values\n"
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)\n")
    done = subprocess.run([sys.executable, "-c", code, *CAPPED], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < DEFAULT_BUDGET_BYTES // 2


def test_dependency_maps():
    v = run("dependency_maps", CONFIGS[0]).values
    assert v["rnn_pattern"] == "lower" and v["encoder_pattern"] == "full" and v["decoder_pattern"] == "lower"
    assert v["rnn_zero_above_diagonal"] and v["decoder_zero_above_diagonal"]
    assert v["encoder_nonzero_fraction"] == 1.0
    assert v["rnn_sequential_steps"] == 8 and v["attention_sequential_steps"] == 1


def test_permutation_equivariance_without_positions():
    v = run("permutation", CONFIGS[0]).values
    assert v["order_blind_without_positions"] and v["max_change_without_positions"] < 1e-4
    assert v["max_change_with_positions"] > 0.1


def test_residual_ablation_depths_and_direction():
    ev = run("residual_ablation", CONFIGS[1])
    v = ev.values
    assert v["depth"] == 3 and v["depths"] == [1, 2, 3, 4, 8]
    assert len(ev.records) == 2 * len(v["depths"])
    assert v["grad_with_skips"] > v["grad_without_skips"] > 0
    assert v["cosine_with_skips"] > v["cosine_without_skips"]


def test_score_scaling():
    for cfg in CONFIGS[:2]:
        v = run("score_scaling", cfg).values
        assert v["d_k"] == cfg.d_k
        assert abs(v["variance_unscaled"] / cfg.d_k - 1) < 0.15
        assert abs(v["variance_scaled"] - 1) < 0.15
        assert v["entropy_unscaled"] < v["entropy_scaled"] <= v["max_entropy"] + 1e-9
    v = run("score_scaling", CONFIGS[2]).values  # d_k = 1: scaling changes nothing
    assert v["entropy_unscaled"] == v["entropy_scaled"]


def test_head_options_are_divisors_with_one_count():
    for cfg in CONFIGS:
        v = run("head_options", cfg).values
        assert v["allowed"] == divisors(cfg.E) and v["count"] == len(divisors(cfg.E))
        assert v["param_counts"] == [4 * cfg.E * cfg.E + 4 * cfg.E]
        assert cfg.E % v["smallest_refused"] != 0


def test_ffn_layers_differ_and_are_position_wise():
    v = run("ffn_layers", CONFIGS[1]).values
    assert v["linear1_shape_layer0"] == v["linear1_shape_layer1"] == (40, 24)
    assert v["linear2_shape"] == (24, 40) and v["input_width"] == 24
    assert not v["same_tensor"] and v["max_abs_difference"] > 0
    assert v["params_per_ffn"] == 2 * 24 * 40 + 40 + 24
    assert v["positions_changed"] == 1
    assert v["hidden_negative_fraction"] == 0.0 and v["output_negative_fraction"] > 0


def test_ffn_layers_would_show_a_model_that_shares_one_ffn(monkeypatch):
    """The evidence reads the model's own layers: a Transformer whose layer 1 reused layer 0's FFN
    shows up as one tensor, and the quiz's rule then picks the 'shared' answer."""
    import quizzes.experiments.layers as experiments  # where ffn_layers builds its model
    from quizzes import BY_ID, Context

    class SharedFFN(experiments.Transformer):
        def __init__(self, **sizes):
            super().__init__(**sizes)
            self.encoder[1].ffn = self.encoder[0].ffn

    assert BY_ID["ffn-different"].expected(Context(CONFIGS[0])) == BY_ID["ffn-different"].choices[0]
    monkeypatch.setattr(experiments, "Transformer", SharedFFN)
    v = run("ffn_layers", CONFIGS[0]).values
    assert v["same_tensor"] and v["max_abs_difference"] == 0
    assert BY_ID["ffn-different"].expected(Context(CONFIGS[0])) == BY_ID["ffn-different"].choices[1]


def test_the_ffn_nonlinearity_is_read_off_the_ffn_itself_over_many_inputs(monkeypatch):
    """The 'hidden' share was the experiment's own torch.relu of linear1, so it showed a ReLU whatever
    the FFN did; and at M=1, E=2 the FFN's two outputs were both above 0, which made the quiz's answer
    'after the FFN'. Now the FFN's own recorded tensors, over 64 inputs, decide, and a model whose
    FFN put its ReLU after the second layer would get that answer."""
    import quizzes.experiments.layers as experiments  # where ffn_layers builds its model
    from core.model import record
    from quizzes import BY_ID, Context

    question = BY_ID["ffn-activation"]
    for cfg in (TransformerConfig(N=2, M=1, E=2, nhead=1, vocab_size=10), CONFIGS[0], CONFIGS[2]):
        assert question.expected(Context(cfg)) == question.choices[1], cfg
    # Here the FFN's outputs are never negative, so a ReLU after it would show nothing: a wider FFN is read.
    narrow = TransformerConfig(N=1, M=2, M_target=7, E=3, nhead=1, vocab_size=10, d_ff=1, seed=1)
    ev = run("ffn_layers", narrow)
    assert question.expected(Context(narrow)) == question.choices[1]
    assert "stayed at 0 or above" in ev.note and "E=8" in ev.note

    class ReluAfter(experiments.FeedForward):
        def forward(self, x, rec=None, prefix=""):
            hidden = record(rec, prefix + "hidden", self.linear1(x))
            return record(rec, prefix + "out", torch.relu(self.linear2(hidden)))

    class Model(experiments.Transformer):
        def __init__(self, **sizes):
            super().__init__(**sizes)
            for layer in self.encoder:
                layer.ffn = ReluAfter(self.E, layer.ffn.linear1.out_features)

    monkeypatch.setattr(experiments, "Transformer", Model)
    v = run("ffn_layers", CONFIGS[0]).values
    assert v["hidden_negative_fraction"] > 0 and v["output_negative_fraction"] == 0
    assert question.expected(Context(CONFIGS[0])) == question.choices[0]


def test_a_nudge_that_leaves_the_ffn_unmoved_is_not_read_as_every_position():
    """With d_ff=1 one nudge of the last position left the FFN's one ReLU off: no output moved, and
    the rule (one position moved, else 'every') picked 'Every position's output'. Eight random nudges
    still left it off at E=2, d_ff=1 (a review found 8 such configs of 1024), and the quiz then expected
    'No output at all'. One nudge is now aimed to switch a hidden unit on; a count of 0 would read as
    'No output at all'."""
    from quizzes import BY_ID, Context
    from quizzes.topics.ffn import _reach

    question = BY_ID["ffn-position-wise"]
    for cfg in (TransformerConfig(N=3, M=3, M_target=7, E=24, nhead=8, layers=4, vocab_size=2, d_ff=1),
                TransformerConfig(E=2, nhead=1, d_ff=1), TransformerConfig(M=1, E=2, nhead=1, d_ff=2)):
        v = run("ffn_layers", cfg).values
        assert v["positions_changed"] == 1 and v["nudged_position_moved"], cfg
        assert question.expected(Context(cfg)) == question.choices[0], cfg
    assert _reach({"positions_changed": 0, "nudged_position_moved": False}) == 2
    assert _reach({"positions_changed": 3, "nudged_position_moved": True}) == 1


@pytest.mark.parametrize("E", [1, 2])
def test_probes_below_three_dimensions_run_where_a_layer_norm_passes_something_on(E):
    """A LayerNorm over one number always gives its bias (over two, only which one is larger), so at
    E=1 no nudge moved any output of our layers: the all-white encoder map was read as 'only the
    output at position j', and sinusoids 'changed nothing'. The probes run at E=4 and say why."""
    from quizzes.experiments import RAISED_WIDTH
    from core.model import EncoderLayer
    from core.weights import seeded

    layer = seeded(EncoderLayer, 1, 1, 4, seed=0)
    with torch.no_grad():
        out = layer(torch.randn(1, 5, 1, generator=torch.Generator().manual_seed(0)))
    assert torch.equal(out, layer.norm2.bias.expand_as(out))  # the input is gone

    cfg = TransformerConfig(N=2, M=8, E=E, nhead=1, vocab_size=10)
    maps = run("dependency_maps", cfg)
    assert maps.values["encoder_pattern"] == "full" and maps.values["decoder_pattern"] == "lower"
    assert f"Run at E={RAISED_WIDTH}, not E={E}" in maps.note and "capped" not in maps.note
    assert run("permutation", cfg).values["max_change_with_positions"] > 0.1
    skips = run("residual_ablation", cfg).values
    assert skips["cosine_with_skips"] > skips["cosine_without_skips"]
    small, note = bounded(cfg)
    assert small.E == RAISED_WIDTH and small.nhead == 1 and note.startswith("Run at E=")


def test_the_model_is_asked_which_width_it_scales_by(monkeypatch):
    """score_scaling reads the scaling off the model's own attention: d_k at every config (with one
    head it asks a copy with four, where d_k and E differ); an attention that divided by sqrt(E)
    instead would be named, and dk-which-width would then expect E."""
    import quizzes.experiments.attention as experiments  # where score_scaling builds its attention
    from core.model import MultiHeadAttention
    from quizzes import BY_ID, Context

    for cfg in CONFIGS:
        assert run("score_scaling", cfg).values["model_divides_by"] == "d_k", cfg
    assert run("score_scaling", CONFIGS[2]).values["model_asked_at"] == "E=16, nhead=4, M=3"

    class ScaledByE(MultiHeadAttention):
        def forward(self, x, context, attn_mask=None, key_padding_mask=None, rec=None, prefix=""):
            out = super().forward(x, context, attn_mask, key_padding_mask, rec, prefix)
            q, k = rec[prefix + "q"], rec[prefix + "k"]
            rec[prefix + "scores"] = q @ k.transpose(-2, -1) / math.sqrt(self.E)  # as if scaled by E
            return out

    monkeypatch.setattr(experiments, "MultiHeadAttention", ScaledByE)
    assert run("score_scaling", CONFIGS[0]).values["model_divides_by"] == "E"
    assert BY_ID["dk-which-width"].expected(Context(CONFIGS[0])) == BY_ID["dk-which-width"].choices[1]


def test_learned_positions_fail_past_max_len():
    v = run("learned_positions", CONFIGS[1]).values
    assert v["learned_fails_past_max_len"] and "max_len=6" in v["learned_error"]
    assert v["learned_shape_at_max_len"] == (6, 24) and v["sinusoidal_shape_past_max_len"] == (7, 24)
    assert v["learned_params"] == 6 * 24


def test_causal_probe_leaves_earlier_outputs_exactly():
    for cfg in CONFIGS[:2]:
        v = run("causal_probe", cfg).values
        pos = v["changed_position"]
        assert v["earlier_max_change_masked"] == 0.0 and v["earlier_unchanged_with_mask"]
        assert v["later_max_change_masked"] > 0 and v["earlier_max_change_unmasked"] > 0
        assert v["positions_changed_with_mask"] == list(range(pos, cfg.M_target))


@pytest.mark.parametrize("vocab_size", [2, 3])
def test_causal_probe_changes_a_token_with_the_smallest_vocabularies(vocab_size):
    """At vocab_size 3 only id 2 is drawn (0 is padding, 1 the start), and '1 - old' made the changed
    token id -1: the probe failed with an IndexError and mask-probe had no answer."""
    cfg = TransformerConfig(N=2, M=4, M_target=7, E=8, nhead=2, vocab_size=vocab_size)
    v = run("causal_probe", cfg).values
    assert v["earlier_unchanged_with_mask"] and v["positions_changed_with_mask"] == list(range(3, 7))


def test_mask_counts():
    v = run("mask_counts", CONFIGS[1]).values
    assert v["shape"] == (5, 5) and v["blocked"] == 10 and v["visible"] == 15
    assert not v["diagonal_blocked"] and not v["below_diagonal_blocked"] and v["key_padding_shape"] == (3, 6)
    big = run("mask_counts", TransformerConfig(N=1, M=8, M_target=10_000, E=8, nhead=2, vocab_size=10)).values
    assert big["blocked"] == 10_000 * 9_999 // 2 and "formula" in run(
        "mask_counts", TransformerConfig(N=1, M=8, M_target=10_000, E=8, nhead=2, vocab_size=10)).note


@pytest.mark.parametrize("cfg, drawn", [(CONFIGS[0], "all 8 positions"), (CONFIGS[3], "first 12 of 20 positions"),
                                        (CONFIGS[2], "the one position")], ids=["default", "capped", "tiny"])
def test_titles_say_how_much_of_the_evidence_is_drawn(cfg, drawn):
    """A title that said "first 12 positions" over a mask of 8 promised more than the chart drew."""
    ev = run("mask_counts", cfg)
    side = int(len(ev.records) ** 0.5)
    assert ev.title == f"The causal mask (True = blocked), {drawn}" and side == min(cfg.M_target, 12)


def test_the_ffn_title_names_the_corner_drawn():
    """Each layer's (d_ff, E) weight is drawn up to 8x8; the title says which part: a corner, or all."""
    narrow = TransformerConfig(N=1, M=4, E=4, nhead=1, d_ff=16, vocab_size=10)
    for cfg, corner, cells in ((CONFIGS[0], "top-left 8x8 of 64x16", 64), (CONFIGS[2], "all 4x1", 4),
                               (narrow, "top-left 8x4 of 16x4", 32)):
        ev = run("ffn_layers", cfg)
        assert ev.title == f"Layer 0's and layer 1's FFN weights ({corner})"
        assert len(ev.records) == 2 * cells  # two layers


def test_parameter_counts_name_their_module_counts_as_counts():
    """The evidence's values are parameter counts; the three counts of modules say so in their names,
    or a learner reads "layer norms 10" as ten parameters."""
    v = run("parameter_counts", CONFIGS[1]).values
    assert (v["number_of_layer_norms"], v["number_of_ffn_blocks"]) == (15, 6)
    assert v["number_of_attention_blocks"] == 9  # 3 encoder layers x 1, 3 decoder layers x 2
    assert not {"layer_norms", "ffn_blocks", "attention_blocks"} & set(v)


def test_shift_right():
    v = run("shift_right", CONFIGS[0]).values
    assert v["decoder_input"][0] == v["start_id"] and v["decoder_input"][1:] == v["labels"][:-1]
    assert v["targets_per_sequence"] == 8


def test_parameter_counts_match_the_formulas():
    cfg = CONFIGS[1]
    v = run("parameter_counts", cfg).values
    E = cfg.E
    assert v["qkv_weights"] == 3 * E * E and v["qkv_with_bias"] == 3 * E * E + 3 * E
    assert v["attention_block"] == 4 * E * E + 4 * E and v["embedding"] == cfg.vocab_size * E
    assert v["model_total"] == param_counts(cfg)["total"]
    assert v["llama_qkv_weights"] == 3 * 8192 ** 2 == 201_326_592
    assert v["llama_embedding"] == 32000 * 8192 == 262_144_000
    assert v["paper_base_total"] == param_counts(PAPER_BASE)["total"]
    assert v["paper_big_total"] == param_counts(PAPER_BIG)["total"]
    assert math.isclose(v["paper_base_total"], 65e6, rel_tol=0.05)
    assert math.isclose(v["paper_big_total"], 213e6, rel_tol=0.02)
    assert v["number_of_layer_norms"] == 5 * cfg.layers


def test_softmax_over_keys():
    v = run("softmax_axis", CONFIGS[0]).values
    assert v["row_sums_all_one"] and not v["column_sums_all_one"] and v["zero_above_diagonal"]


def test_batch_first():
    v = run("batch_first", CONFIGS[1]).values
    assert v["ours"] == (3, 6, 24) and v["pytorch_default"] == (6, 3, 24)
    assert v["pytorch_batch_first_flag"] is False


def test_experiments_are_deterministic():
    a = run("residual_ablation", CONFIGS[0]).values
    b = run("residual_ablation", CONFIGS[0]).values
    torch.testing.assert_close(a["grad_with_skips"], b["grad_with_skips"], rtol=0, atol=0)
    assert run("dependency_maps", CONFIGS[0]).records == run("dependency_maps", CONFIGS[0]).records


def test_experiments_leave_the_global_random_stream_alone():
    """Sessions share one process: an experiment must draw only from its own generators."""
    state = torch.get_rng_state()
    for name in GENERAL:
        run(name, CONFIGS[0])
    assert torch.equal(state, torch.get_rng_state())


def test_attention_shapes_follow_the_config_step_by_step():
    cfg = TransformerConfig(N=3, M=5, E=12, nhead=4, vocab_size=20)
    ev = run("attention_shapes", cfg)
    shapes = {r["step"]: r["live shape"] for r in ev.records}
    assert shapes["Q = x W^Q + b, every head, stacked"] == "(3, 4, 5, 3)"  # (N, nhead, M, d_k)
    assert shapes["one head's Q (K and V alike)"] == "(3, 5, 3)"
    assert shapes["weights: softmax over the keys"] == "(3, 4, 5, 5)"
    assert shapes["heads concatenated"] == shapes["after W^O"] == "(3, 5, 12)"
    real = trace(cfg)  # the shape-only trace agrees with a real pass
    assert ev.values["q_stacked"] == tuple(real.tensors["enc.0.self_attn.q"].shape)
    assert ev.values["q_one_head"] == real.row("qkv_one_head").shape


def test_the_gru_runs_at_the_learners_own_sizes_when_that_is_cheap():
    """N=3 is past the influence maps' cap (N <= 2), yet a GRU that small runs as it is: the
    evidence shows the learner's own output shape and step count, measured."""
    cfg = TransformerConfig(N=3, M=24, E=16, nhead=2, vocab_size=100)
    ev = run("dependency_maps", cfg)
    v = ev.values
    assert v["gru_input_shape"] == v["gru_output_shape"] == (3, 24, 16)  # (N, M, E)
    assert v["rnn_sequential_steps"] == 24 and v["gru_ran_on"] == "(3, 24, 16): your sizes"
    assert v["map_positions"] == MAX_LEN and "nn.GRU" not in ev.note  # the maps alone are capped


def test_the_gru_past_its_budget_shows_the_learners_shape_and_counts_every_step():
    """At the sliders' largest sizes a real GRU would need gigabytes: it runs at N=2 and E=64 but
    over all M positions, and the evidence gives the shape at the learner's sizes, saying how."""
    cfg = TransformerConfig(N=64, M=4096, E=12288, nhead=96, vocab_size=50257)
    ev = run("dependency_maps", cfg)
    v = ev.values
    assert v["gru_output_shape"] == (64, 4096, 12288) and v["rnn_sequential_steps"] == 4096
    assert v["gru_ran_on"] == "(2, 4096, 64), returned (2, 4096, 64): smaller, see below"
    assert "ran on (2, 4096, 64) and returned (2, 4096, 64)" in ev.note
    assert "At your sizes that is (64, 4096, 12288)" in ev.note
    # Past the M slider (the CLI allows it), the steps are counted over the first MAX_GRU_STEPS.
    long = run("dependency_maps", TransformerConfig(N=1, M=MAX_GRU_STEPS + 5, E=16, nhead=2, vocab_size=100))
    assert long.values["rnn_sequential_steps"] == MAX_GRU_STEPS + 5
    assert long.values["gru_output_shape"] == (1, MAX_GRU_STEPS + 5, 16)
    assert f"It took {MAX_GRU_STEPS} steps for {MAX_GRU_STEPS} positions" in long.note


def test_shape_tables_name_the_row_of_every_record():
    """The quiz marks the row a question asks about by its key (core.rows), so every record of the
    pass's table carries one, in the table's order."""
    cfg = CONFIGS[1]
    rows = run("pass_shapes", cfg).records
    assert [r["key"] for r in rows][:14] == [r.key for r in trace(cfg, shape_only=True).rows]
    assert {r["key"] for r in rows[14:]} == {"target_tokens", "W_Q", "causal_mask", "key_padding_mask",
                                             "decoder_self_scores", "cross_scores", "ffn_hidden", "logits",
                                             "k_stacked"}
    llama_like = TransformerConfig(arch="decoder-only", nhead=4, nhead_kv=2, positional="rope", activation="swiglu")
    rows = run("pass_shapes", llama_like).records
    keys = [r["key"] for r in rows]
    assert keys[:15] == [r.key for r in trace(llama_like, shape_only=True).rows] and len(set(keys)) == len(keys)
    assert {"k_stacked", "kv_cache", "swiglu_gate", "rotation_table"} <= set(keys)
    assert next(r for r in rows if r["key"] == "kv_cache")["live shape"] == "(2, 2, 2, 2, 8, 4)"
    steps = {r["key"]: r["live shape"] for r in run("attention_shapes", cfg).records if r["key"]}
    assert steps["q_stacked"] == "(3, 4, 6, 6)" and steps["concatenated_heads"] == "(3, 6, 24)"


@pytest.mark.parametrize("name", ["attention_shapes", "pass_shapes"])
def test_shape_experiments_read_a_shape_only_trace_they_are_given(name, monkeypatch):
    """The quiz page hands its own shape-only trace to these two, which made one each of the same
    config before: the evidence is the same, and no new trace is made."""
    cfg = CONFIGS[1]
    alone = run(name, cfg)
    given = trace(cfg, shape_only=True)
    calls = []
    import quizzes.experiments.shapes as shapes  # where the two look trace up

    original = shapes.trace
    monkeypatch.setattr(shapes, "trace", lambda *a, **k: calls.append(a) or original(*a, **k))
    assert run(name, cfg, given) == alone and calls == []
    # A trace with values, or of another config, is not taken: the experiment traces shape-only itself.
    assert run(name, cfg, trace(cfg)) == alone and len(calls) == 1
    assert run(name, cfg, trace(CONFIGS[0], shape_only=True)) == alone and len(calls) == 2


def test_only_the_shape_experiments_take_a_trace():
    given = trace(CONFIGS[0], shape_only=True)
    for name in set(EXPERIMENTS) - TAKES_SHAPES:
        assert "shapes" not in inspect.signature(EXPERIMENTS[name]).parameters, name
    assert TAKES_SHAPES <= set(EXPERIMENTS)
    assert run("mask_counts", CONFIGS[0], given) == run("mask_counts", CONFIGS[0])  # ignored by the others


def test_the_score_scaling_title_names_only_what_the_chart_draws():
    """Its title promised 'softmax entropy against d_k', but the chart draws the variance alone (the
    entropies are in the tooltips and the table), so a learner looked for a line that is not there."""
    ev = run("score_scaling", TransformerConfig(N=1, M=8, E=16, nhead=2, vocab_size=10))
    assert ev.chart["y"] == "variance" and "entropy" not in ev.title.lower()


def test_the_skip_ablations_note_names_only_the_sizes_it_capped():
    """It said 'Run at capped sizes to stay fast: M=16, M_target=16, layers=2' while it ran at the config's
    own depth of 3 (and has no target, batch or vocabulary at all)."""
    ev = run("residual_ablation", TransformerConfig(layers=3, M=20, E=16, nhead=2, N=4, vocab_size=1000))
    assert ev.values["depth"] == 3
    assert ev.note == ""  # its length is its own, SKIP_POSITIONS whatever M is: no M was capped
    assert run("residual_ablation", TransformerConfig(layers=3, M=20, E=100, nhead=2, d_ff=200)).note == (
        "Run at capped sizes to stay fast: E=64.")


@pytest.mark.parametrize("M, M_target", [(1, 64), (8, 1), (3, 5), (1, 1)])
def test_the_decoder_map_is_over_the_targets_own_positions(M, M_target):
    """The decoder's map ran over M positions, not M_target: at M=1, M_target=64 it showed one position and
    'diagonal', though the decoder reads 64 (capped to 16) and its map is lower-triangular; at M=8,
    M_target=1 it showed 'lower' over 8 positions, for a decoder with one. A one-position map fits every
    choice of the map questions at once, so a one-token sequence is measured at two positions."""
    from quizzes import BY_ID, Context, check

    cfg = TransformerConfig(N=1, M=M, M_target=M_target, E=16, nhead=2, vocab_size=20)
    ev = run("dependency_maps", cfg)
    v = ev.values
    L, T = max(M, 2), max(min(M_target, MAX_LEN), 2)
    assert v["map_positions"] == L and v["decoder_map_positions"] == T
    assert (v["rnn_pattern"], v["encoder_pattern"], v["decoder_pattern"]) == ("lower", "full", "lower")
    decoder = [r for r in ev.records if r["model"] == "masked decoder layer"]
    assert len(decoder) == T * T and len(ev.records) - len(decoder) == 2 * L * L
    assert ("M_target=16" in ev.note) is (M_target > MAX_LEN)
    assert ("A one-position map would fit every choice" in ev.note) is (1 in (M, M_target))
    # The textbook answers are the ones graded right, whatever the lengths.
    ctx = Context(cfg)
    for qid, answer in (("rnn-map", "Only outputs at positions j and later"),
                        ("rnn-encoder-map", "Every output position"),
                        ("rnn-decoder-map", "Only outputs at positions j and later")):
        q = BY_ID[qid]
        assert check(q, q.answer(ctx), answer), (qid, cfg)


def test_entropies_are_measured_over_a_fixed_number_of_keys_whatever_m_is():
    """At M = M_target = 1 the probe measured one key per softmax, whose weight is 1: both entropies were 0 and
    dk-entropy's answer 'The same' said nothing about the scaling. It now measures over ENTROPY_KEYS keys
    whatever M is, the prompt says how many, and a single-key config gets the direction the scaling gives."""
    from quizzes import BY_ID, Context
    from quizzes.experiments import ENTROPY_KEYS

    q = BY_ID["dk-entropy"]
    one = TransformerConfig(N=1, M=1, E=16, nhead=2, vocab_size=20)
    v = run("score_scaling", one).values
    assert ENTROPY_KEYS > 1 and v["keys"] == ENTROPY_KEYS
    assert run("score_scaling", one.replace(M=40, M_target=5)).values["keys"] == ENTROPY_KEYS
    assert 0 < v["entropy_unscaled"] < v["entropy_scaled"] <= v["max_entropy"] == pytest.approx(math.log(ENTROPY_KEYS))
    assert f"over {ENTROPY_KEYS} keys per softmax" in q.text(Context(one))
    assert q.expected(Context(one)) == q.choices[0]  # lower
    assert q.expected(Context(TransformerConfig())) == q.choices[0]


def test_dk_entropy_follows_the_direction_of_the_change_not_a_two_percent_band():
    """Multiplying scores by sqrt(d_k) > 1 strictly lowers a softmax's entropy unless the scores are all equal,
    but the answer called entropies within 2% 'The same': at d_k = 2 over two keys, seeds 5, 15, 25, 35 and 37
    of 40 were graded 'The same' (seed 5: 0.6790 unscaled against 0.6859 scaled). Only float rounding is
    tolerated now, and d_k = 1, where the scaling changes nothing, stays 'The same'."""
    from quizzes import BY_ID, Context
    from quizzes.topics.dk import entropy_change

    q = BY_ID["dk-entropy"]
    assert entropy_change({"entropy_unscaled": 0.6790, "entropy_scaled": 0.6859}) == 0
    assert entropy_change({"entropy_unscaled": 0.7, "entropy_scaled": 0.7}) == 2
    for seed in range(40):
        two = TransformerConfig(N=1, M=2, E=2, nhead=1, vocab_size=20, seed=seed)  # d_k = 2, two keys
        assert q.expected(Context(two)) == q.choices[0], seed
        assert q.expected(Context(two.replace(E=1))) == q.choices[2], seed  # d_k = 1


def test_the_causal_probe_says_a_one_token_target_has_nothing_earlier_to_protect():
    """At M_target=1 the explanation said earlier outputs stay the same, and change without the mask, but there
    is no earlier position: the probe changed position 0, the start token, and 'All outputs' was as true as
    the answer graded right. It runs at M_target=2 then, and says so; from M_target=2 on it changes a token
    after the start token."""
    from quizzes import BY_ID, Context, check

    one = TransformerConfig(N=1, M=4, M_target=1, E=8, nhead=2, vocab_size=20)
    ev = run("causal_probe", one)  # one target token: every choice would be true, so it runs at two
    assert ev.values["M_target"] == 2 and ev.values["changed_position"] == 1
    assert "only input is the start token" in ev.note and "runs at M_target=2" in ev.note
    assert "With M_target = 1 there is nothing earlier to protect" in BY_ID["mask-probe"].explanation
    q = BY_ID["mask-probe"]
    assert check(q, q.answer(Context(one)), q.choices[0])
    for T in (2, 3, 20):
        ev = run("causal_probe", TransformerConfig(N=1, M=4, M_target=T, E=8, nhead=2, vocab_size=20))
        assert ev.values["changed_position"] >= 1 and "start token" not in ev.note


def test_no_gradient_without_the_skips_is_an_infinite_ratio_not_0():
    """At d_ff=1 no gradient reaches the embeddings without the skips, and 'gradient with skips ÷ without'
    read 0, as if the skips took the gradient away."""
    ev = run("residual_ablation", TransformerConfig(N=2, M=8, E=16, nhead=2, vocab_size=20, d_ff=1))
    v = ev.values
    assert v["grad_without_skips"] == 0 < v["grad_with_skips"] and v["grad_ratio"] == math.inf
    assert "no gradient reaches the embeddings" in ev.note and "infinite" in ev.note
    assert "no gradient" not in run("residual_ablation", CONFIGS[0]).note


@pytest.mark.parametrize("M, M_target", [(1, 64), (8, 1), (20, 5)])
def test_the_softmax_axis_probe_is_the_decoders_over_its_own_positions(M, M_target):
    """At M=1, M_target=64 it ran over M=1 position, found 'each column sums to 1' true of a 1 x 1 table, and its
    note named M_target=16 as a cap it never used."""
    ev = run("softmax_axis", TransformerConfig(N=3, M=M, M_target=M_target, E=16, nhead=2, vocab_size=20))
    T = min(M_target, MAX_LEN)
    assert len(ev.values["first_row"]) == T and len(ev.records) == 2 * T
    assert ev.values["row_sums_all_one"] and ev.values["column_sums_all_one"] is (T == 1)
    capped = "Run at capped sizes to stay fast: M_target=16." if M_target > MAX_LEN else ""
    one = "With M_target=1 the weights are one 1 × 1 table" if T == 1 else ""
    assert ev.note.startswith(capped) and (one in ev.note) and "M=" not in ev.note and "N=" not in ev.note


@pytest.mark.parametrize("name, note", [
    ("permutation", "Run at capped sizes to stay fast: M=16, E=64, nhead=64, d_ff=256."),
    ("causal_probe", "Run at capped sizes to stay fast: M=16, M_target=16, E=64, nhead=64, d_ff=256, layers=2, "
                     "vocab_size=256."),
    ("softmax_axis", "Run at capped sizes to stay fast: M_target=16, E=64, nhead=64."),
])
def test_capped_notes_name_only_the_sizes_each_probe_reads(name, note):
    """At GPT-3's sizes the permutation's note listed M_target, layers, vocab_size and N, though it builds one
    encoder layer over one sequence; at the small character model's N=5 each of these three said 'N=2'."""
    assert run(name, ENC_DEC_AT_GPT3_WIDTHS).note == note
    small_model = TransformerConfig(N=5, M=8, E=8, nhead=2, vocab_size=44, layers=1, positional="learned")
    assert run(name, small_model).note == ""


def test_head_options_say_when_e_allows_a_single_nhead():
    """dk-params-nhead asked to change nhead 'to another value E allows', and its evidence compared nothing,
    at E=1, which allows only nhead=1."""
    from quizzes import BY_ID, Context

    one = TransformerConfig(N=1, M=4, E=1, nhead=1, vocab_size=20)
    ev = run("head_options", one)
    assert ev.values["allowed"] == [1]
    assert ev.note == ("E=1 allows only nhead=1, so there is no other nhead to compare here; at any E the count "
                       "is 4(E² + E) whatever nhead is.")
    assert run("head_options", one.replace(E=2)).note == ""
    q = BY_ID["dk-params-nhead"]
    assert "another value" not in q.text(Context(one)) and "E=1 allows only nhead=1" in q.explanation


def test_the_shift_evidence_says_when_every_token_shares_the_start_tokens_id():
    """At vocab_size=2 the explanation said 'id 0 is padding here and id 1 the start token', but every content
    token is id 1 too: the note and the explanation now say so."""
    from quizzes import BY_ID

    ev = run("shift_right", TransformerConfig(N=1, M=4, E=8, nhead=2, vocab_size=2))
    assert set(ev.values["labels"]) == {1} and ev.values["start_id"] == 1
    assert "every target token is id 1 too, the start token's id" in ev.note
    assert run("shift_right", TransformerConfig(N=1, M=4, E=8, nhead=2, vocab_size=3)).note == ""
    assert "With vocab_size = 2 there is no other id" in BY_ID["shift-start"].explanation
