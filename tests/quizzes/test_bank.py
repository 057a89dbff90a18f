"""The bank: its size and mix, and every answer computed, checked and perturbed."""

import pytest

from core import TransformerConfig, trace
from core.config import PRESETS
from quizzes import BY_ID, KINDS, QUESTIONS, TOPICS, Context, answer_key, check, format_answer, questions_for
from quizzes.check import parse_number

from .conftest import ALL_CONFIGS, CONFIG_A, CONFIG_B, CONFIG_IDS, FAMILY_CONFIGS, PART_CONFIGS, context


def applying(q) -> list:
    """The test configs, of every family and with the later parts, whose model the question is about
    (Question.applies)."""
    return [cfg for cfg in (*ALL_CONFIGS, *PART_CONFIGS.values()) if q.applies(cfg)]


def perturbed(q, expected) -> str:
    """A near miss of the expected answer, as a learner might type it."""
    if q.kind == "shape":
        return "(" + ", ".join(str(d + (1 if i == 0 else 0)) for i, d in enumerate(expected)) + ")"
    if q.kind == "numeric":
        wrong = float(expected) * (1 + 3 * q.tolerance) + 1 if q.tolerance else float(expected) + 1
        return format_answer(q, wrong)
    return next(c for c in q.choices if c != expected)


def test_size_and_mix():
    assert len(QUESTIONS) >= 40
    assert sum(q.parametric for q in QUESTIONS) >= 15
    assert {q.kind for q in QUESTIONS} == set(KINDS)
    assert len(TOPICS) >= 10 and all(any(q.topic == t for q in QUESTIONS) for t in TOPICS)
    assert len(BY_ID) == len(QUESTIONS)


def test_no_question_has_only_its_prompt_as_evidence():
    from quizzes.experiments import EXPERIMENTS
    assert all(q.evidence in EXPERIMENTS for q in QUESTIONS)
    assert all(q.explanation.strip() for q in QUESTIONS)


# Every question at every test config whose model it is about.
APPLYING = [pytest.param(q, cfg, id=f"{q.id}-{name}") for q in QUESTIONS
            for cfg, name in (*zip(ALL_CONFIGS, CONFIG_IDS), *((c, n) for n, c in PART_CONFIGS.items()))
            if q.applies(cfg)]


@pytest.mark.parametrize("q, cfg", APPLYING)
def test_check_accepts_the_computed_answer_and_rejects_a_perturbed_one(q, cfg):
    """At every test config of every family the question applies to (GQA and MQA, RoPE, RMSNorm, SwiGLU,
    pre-norm among them), in numbers and, where it has one, in its formula."""
    ctx = context(cfg)
    expected = q.expected(ctx)
    symbols, formula = q.reading_symbols(ctx), q.formula(ctx)
    assert check(q, expected, format_answer(q, expected), symbols, formula)
    assert not check(q, expected, perturbed(q, expected), symbols, formula)
    assert not check(q, expected, "")
    assert not check(q, expected, "not an answer")
    if formula:
        assert check(q, expected, formula, symbols, formula), formula
    assert ctx.evidence(q.evidence).values  # the evidence the page shows under the answer runs here too


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_every_question_applies_to_a_test_config_and_has_evidence_there(q):
    """The test configs reach every question, so the test above checks each one somewhere."""
    configs = applying(q)
    assert configs, q.id
    assert context(configs[0]).evidence(q.evidence).values


@pytest.mark.parametrize("q", [q for q in QUESTIONS if q.parametric], ids=lambda q: q.id)
def test_parametric_answers_change_with_the_config(q):
    """Within a family, two configs the question applies to give two answers."""
    groups = (*FAMILY_CONFIGS.values(), tuple(PART_CONFIGS.values()))
    pairs = [(a, b) for configs in groups for i, a in enumerate(configs) for b in configs[i + 1:]
             if q.applies(a) and q.applies(b)]
    assert pairs, q.id
    assert any(q.expected(context(a)) != q.expected(context(b)) for a, b in pairs), q.id


@pytest.mark.parametrize("q", [q for q in QUESTIONS if q.kind == "shape"], ids=lambda q: q.id)
def test_shape_answers_accept_every_written_form(q):
    for cfg in applying(q):
        dims = q.expected(context(cfg))
        for text in (str(tuple(dims)), "x".join(map(str, dims)), "×".join(map(str, dims)),
                     "[" + ",".join(map(str, dims)) + "]", " ".join(map(str, dims))):
            assert check(q, dims, text), text


def test_shape_answers_come_from_the_trace(ctx_a):
    t = ctx_a.trace
    assert BY_ID["qkv-scores"].expected(ctx_a) == t.shapes["enc.0.self_attn.weights"] == (2, 2, 8, 8)
    assert BY_ID["shape-probs"].expected(ctx_a) == t.shapes["probs"] == (2, 8, 100)
    assert BY_ID["dk-wq"].expected(ctx_a) == (16, 8)


def test_the_gru_question_agrees_with_a_real_gru(ctx_a):
    """rnn-gru-shape's evidence runs nn.GRU(E, E, batch_first=True) on an input of the encoder's
    shape; within the experiments' caps (N <= 2, for one) its output is exactly the expected answer."""
    for ctx in (ctx_a, Context(TransformerConfig(N=1, M=5, M_target=3, E=24, nhead=4, vocab_size=50))):
        assert ctx.value("dependency_maps", "gru_input_shape") == ctx.trace.shapes["src.sum"]
        assert ctx.value("dependency_maps", "gru_output_shape") == BY_ID["rnn-gru-shape"].expected(ctx)


@pytest.mark.parametrize("cfg", [CONFIG_B, TransformerConfig(N=64, M=4096, E=12288, nhead=96, vocab_size=50257)],
                         ids=["N past the maps' cap", "largest sliders"])
def test_the_gru_evidence_gives_the_answers_past_the_experiments_caps(cfg):
    """The GRU's output shape and step count are the learner's, at every size: measured when a real
    GRU of their sizes is cheap, otherwise worked out from a smaller real run (and said so)."""
    ctx = Context(cfg)
    assert ctx.value("dependency_maps", "gru_output_shape") == BY_ID["rnn-gru-shape"].expected(ctx)
    assert ctx.value("dependency_maps", "rnn_sequential_steps") == BY_ID["rnn-steps"].expected(ctx) == cfg.M


def test_every_shape_question_names_a_row_its_table_lists(ctx_a):
    """A shape question whose answer reads one row of the pass (row_shape) names that row, and a
    table of evidence that lists the pass's tensors has it, so the quiz can mark it."""
    from quizzes.topics.shapes import QUESTIONS as SHAPES

    assert [q.row for q in SHAPES if q.evidence == "pass_shapes"] == [
        "input_tokens", "token_embedding", "encoder_output", "target_embedding", "cross_scores",
        "output_probabilities", "ffn_output"]
    tables = [q for q in QUESTIONS if q.row and context(applying(q)[0]).evidence(q.evidence).chart.get("kind") == "table"]
    assert len([q for q in tables if q.evidence == "pass_shapes"]) == 17
    for q in tables:
        for cfg in applying(q):
            ctx = context(cfg)
            assert q.row in [r["key"] for r in ctx.evidence(q.evidence).records], (q.id, cfg.arch)
    assert BY_ID["rnn-steps"].row is None and BY_ID["dk-value"].row is None  # no row of the pass


def test_every_shape_question_shows_the_shape_it_asks_for(ctx_a):
    """A shape question's evidence must contain its expected answer, not only something related:
    checked at two configs within the experiments' caps whose sizes all differ."""
    other = Context(TransformerConfig(N=1, M=5, M_target=3, E=24, nhead=4, vocab_size=50, d_ff=40))
    for ctx in (ctx_a, other, *map(context, ALL_CONFIGS)):
        for q in QUESTIONS:
            if q.kind != "shape" or not q.applies(ctx.cfg):
                continue
            ev = ctx.evidence(q.evidence)
            shown = {tuple(v) for v in ev.values.values() if isinstance(v, (tuple, list))}
            shown |= {r["live shape"] for r in ev.records if "live shape" in r}
            expected = tuple(q.expected(ctx))
            assert expected in shown or str(expected) in shown, (q.id, q.evidence, expected)


def test_cross_attention_shape_when_lengths_differ():
    ctx = Context(TransformerConfig(N=1, M=7, M_target=3, E=8, nhead=4, vocab_size=20, layers=1))
    assert BY_ID["shape-cross"].expected(ctx) == (1, 4, 3, 7)
    assert BY_ID["mask-attn-shape"].expected(ctx) == (3, 3)
    assert BY_ID["mask-kpm-shape"].expected(ctx) == (1, 7)


def test_conceptual_answers_match_live_evidence(ctx_a):
    """The facts behind the stored choices hold on the live model."""
    assert ctx_a.value("dependency_maps", "rnn_pattern") == "lower"
    assert ctx_a.value("dependency_maps", "encoder_pattern") == "full"
    assert ctx_a.value("softmax_axis", "row_sums_all_one") is True
    assert ctx_a.value("softmax_axis", "column_sums_all_one") is False
    assert ctx_a.value("ffn_layers", "hidden_negative_fraction") == 0.0
    assert ctx_a.value("ffn_layers", "output_negative_fraction") > 0.0
    assert ctx_a.value("mask_counts", "diagonal_blocked") is False


def test_answers_read_off_the_mask_and_the_ffn_follow_the_evidence(ctx_a):
    """mask-which and ffn-activation are decided by live evidence: on this model the upper triangle
    and 'between the layers'; evidence of a lower-triangular mask, or of an FFN with no ReLU, or one
    with a ReLU after it, picks the other choices."""
    from quizzes.topics.ffn import _nonlinearity
    from quizzes.topics.masking import _which_blocked

    assert BY_ID["mask-which"].expected(ctx_a) == BY_ID["mask-which"].choices[0]
    assert BY_ID["ffn-activation"].expected(ctx_a) == BY_ID["ffn-activation"].choices[1]
    upper = {"M_target": 4, "blocked": 6, "diagonal_blocked": False, "below_diagonal_blocked": False}
    assert _which_blocked(upper) == 0
    assert _which_blocked({**upper, "below_diagonal_blocked": True}) == 1
    assert _which_blocked({**upper, "blocked": 4, "diagonal_blocked": True}) == 2
    assert _nonlinearity({"hidden_negative_fraction": 0.0, "output_negative_fraction": 0.5}) == 1
    assert _nonlinearity({"hidden_negative_fraction": 0.0, "output_negative_fraction": 0.0}) == 0
    assert _nonlinearity({"hidden_negative_fraction": 0.5, "output_negative_fraction": 0.5}) == 2


def test_numeric_tolerance_is_relative():
    q = BY_ID["dk-variance"]
    assert check(q, 8.0, "9.5") and not check(q, 8.0, "10")
    q = BY_ID["params-llama-qkv"]
    assert check(q, 201.3, "201") and check(q, 201.3, "201.3") and not check(q, 201.3, "190")


def test_choice_accepts_its_letter():
    q = BY_ID["mask-which"]
    assert check(q, q.choices[0], "a") and check(q, q.choices[0], q.choices[0].upper())
    assert not check(q, q.choices[0], "b") and not check(q, q.choices[0], "z")


def test_answer_key_is_plain_json_values():
    """The key goes out as JSON (the CLI, a download): its values are Python's own plain types, so
    json.dumps takes them strictly (no NaN) and reads them back unchanged."""
    import json

    key = answer_key(CONFIG_A)
    assert [q["id"] for q in key["questions"]] == [q.id for q in questions_for(None, CONFIG_A)]
    assert json.loads(json.dumps(key, allow_nan=False)) == key

    def json_plain(value) -> bool:
        if isinstance(value, (list, tuple)):
            return all(json_plain(v) for v in value)
        if isinstance(value, dict):
            return all(type(k) is str and json_plain(v) for k, v in value.items())
        return value is None or type(value) in (bool, int, float, str)

    assert json_plain(key)
    for item in key["questions"]:
        q = BY_ID[item["id"]]
        assert check(q, q.expected(Context(CONFIG_A)) if q.kind != "numeric" else item["answer"],
                     item["answer_text"])
        if q.kind == "shape":
            assert isinstance(item["answer"], list)
        if q.kind == "numeric":
            assert parse_number(item["answer_text"]) is not None


EXPRESSION_CONFIGS = [TransformerConfig(), CONFIG_B, TransformerConfig(N=1, M=1, E=1, nhead=1, vocab_size=2, layers=1),
                      TransformerConfig(N=5, M=40, M_target=3, E=96, nhead=12, d_ff=100, vocab_size=777, layers=7),
                      TransformerConfig(N=2, M=6, E=24, nhead=3, vocab_size=50, layers=3, positional="learned",
                                        max_len=70, tie_embeddings=True),
                      TransformerConfig(N=2, M=6, E=24, nhead=4, nhead_kv=2, vocab_size=50, layers=3, norm="rmsnorm",
                                        norm_first=True, activation="swiglu", bias=False),
                      *ALL_CONFIGS[2:],
                      TransformerConfig(arch="decoder-only", N=1, M=1, E=2, nhead=1, vocab_size=2, layers=1,
                                        positional="rope", norm_first=True, activation="swiglu"),
                      *PART_CONFIGS.values()]


@pytest.mark.parametrize("q", [q for q in QUESTIONS if q.expression and q.kind == "numeric"], ids=lambda q: q.id)
def test_every_answer_in_symbols_is_the_live_answer_at_every_config(q):
    """A number's expression (what a reply in symbols is held to) is never written wrong: at each
    config it gives the answer computed from the live model (exactly, or for a measured value within
    the question's tolerance), and a reply of it is right."""
    from quizzes.check import parse_expression

    configs = [cfg for cfg in EXPRESSION_CONFIGS if q.applies(cfg)]
    assert configs
    for cfg in configs:
        ctx = context(cfg)
        expected, formula = q.expected(ctx), q.formula(ctx)
        assert parse_expression(formula, ctx.symbols) == pytest.approx(expected, rel=q.tolerance or 1e-12), cfg
        assert check(q, expected, formula, ctx.symbols, formula)


@pytest.mark.parametrize("q", [q for q in QUESTIONS if q.kind == "shape" and q.row is None], ids=lambda q: q.id)
def test_every_shape_that_no_row_holds_has_a_formula_that_gives_the_live_shape(q):
    """A shape question whose answer is no row of the pass (PyTorch's default layout, a weight's (out, in)
    order) has its formula as an ``expression``: read at each config, it is the live shape, and a reply of it
    is right."""
    from quizzes.check import parse_shape

    configs = [cfg for cfg in EXPRESSION_CONFIGS if q.applies(cfg)]
    assert configs
    for cfg in configs:
        ctx = context(cfg)
        expected, formula = q.expected(ctx), q.formula(ctx)
        assert formula and parse_shape(formula, ctx.symbols) == expected, cfg
        assert check(q, expected, formula, ctx.symbols, formula)


def test_a_formula_that_depends_on_the_config_is_the_one_of_the_config_asked_for():
    """A learned positional table has max_len*E parameters and sinusoids none; a tied matrix is counted
    once. The page shows an attempt's formula at the config it was answered with (``cfg``)."""
    learned = TransformerConfig(positional="learned", tie_embeddings=True)
    pos, total, ctx = BY_ID["pos-params"], BY_ID["params-total"], Context(TransformerConfig())
    assert pos.formula(ctx) == "0" and pos.formula(ctx, learned) == "max_len*E"
    assert "max_len*E" not in total.formula(ctx) and "max_len*E" in total.formula(ctx, learned)
    assert total.formula(ctx).startswith("2*vocab_size*E") and total.formula(ctx, learned).startswith("vocab_size*E")
    learned_ctx = Context(learned)
    assert check(pos, pos.expected(learned_ctx), "E*max_len", learned_ctx.symbols, pos.formula(learned_ctx))
    assert not check(pos, pos.expected(learned_ctx), "E*max_len", ctx.symbols, pos.formula(ctx))


def test_an_expression_in_the_wrong_symbols_is_wrong_even_where_they_are_equal():
    """By default M_target = M = 8: 'M*(M - 1)/2' has the causal mask's count, 28, but the mask is
    M_target x M_target."""
    q, ctx = BY_ID["mask-blocked"], Context(TransformerConfig())
    expected, formula = q.expected(ctx), q.formula(ctx)
    assert formula == "M_target*(M_target - 1)/2" and expected == 28
    for right in ("28", "M_target*(M_target-1)/2", "M_target^2/2 - M_target/2", "8*7/2"):
        assert check(q, expected, right, ctx.symbols, formula), right
    for wrong in ("M*(M-1)/2", "M*(M_target-1)/2", "29"):
        assert not check(q, expected, wrong, ctx.symbols, formula), wrong
    assert check(q, expected, "M*(M-1)/2", ctx.symbols)  # without the formula, only the value counts
    steps = BY_ID["rnn-steps"]  # a GRU over the source: M steps, not M_target
    assert not check(steps, 8, "M_target", ctx.symbols, steps.formula(ctx)) and check(steps, 8, "M", ctx.symbols,
                                                                                         steps.formula(ctx))


def test_no_prompt_counts_one_thing_in_the_plural():
    """At the smallest config, 'a stack of 1 encoder layers' and 'The decoder has 1 layers' were what a
    learner read. A count written as an equation (M=1 tokens, layers=1) is notation and stays."""
    import re

    smallest = TransformerConfig(N=1, M=1, E=1, nhead=1, vocab_size=2, layers=1)
    one_stack = dict(arch="decoder-only", N=1, M=1, E=2, nhead=1, vocab_size=2, layers=1, positional="rope")
    parts = (TransformerConfig(**one_stack, n_experts=1, top_k=1, n_shared_experts=1, d_ff_expert=1, window=1,
                               head_dim=4, qk_norm=True),
             TransformerConfig(**one_stack, attention="mla", kv_lora_rank=1, rope_head_dim=2, nope_head_dim=1,
                               v_head_dim=1))
    plural = re.compile(r"(?<![=\w.])1 (?:\w+ )?(?:layers|heads|tokens|positions|sequences|steps|rows)\b")
    shown = [(q, Context(cfg)) for cfg in (smallest, *parts) for q in questions_for(None, cfg)]
    later = {"Mixture of experts", "Latent attention (MLA)", "Sliding window", "Head width and qk_norm"}
    assert {q.id for q in QUESTIONS if q.topic in later} <= {q.id for q, _ in shown}
    assert not [(q.id, q.text(ctx)) for q, ctx in shown if plural.search(q.text(ctx))]


def test_qkv_stacked_says_which_stacked_layout_it_asks_for():
    """'PyTorch's layout' is half true: nn.MultiheadAttention's reference path holds Q as (N·nhead, M, d_k), and
    only its scaled-dot-product call takes (N, nhead, M, d_k). The prompt asks for this model's Q with the heads
    on an axis of their own, so the folded layout is not what it asks for, and the explanation names both."""
    q = BY_ID["qkv-stacked"]
    ctx = Context(CONFIG_B)
    expected, formula = q.expected(ctx), q.formula(ctx)
    assert expected == (CONFIG_B.N, CONFIG_B.nhead, CONFIG_B.M, CONFIG_B.d_k)
    assert "not folded into the batch axis" in q.text(ctx)
    assert not check(q, expected, "(N*nhead, M, d_k)", ctx.symbols, formula)
    assert "F.multi_head_attention_forward" in q.explanation and "(N·nhead, M, d_k)" in q.explanation
    assert "scaled_dot_product_attention" in q.explanation


def test_no_quiz_text_says_pytorchs_layout_without_saying_which():
    """Wherever a question, its choices or its evidence says 'PyTorch layout', it names which of PyTorch's
    layouts it means."""
    from quizzes.experiments import run

    asked = {q: applying(q)[0] for q in QUESTIONS}  # each question at a test config it is shown for
    texts = [text for q, cfg in asked.items() for text in (q.text(context(cfg)), q.explanation, *q.choices)]
    for name, cfg in {q.evidence: cfg for q, cfg in asked.items()}.items():
        ev = run(name, cfg)
        texts += [ev.title, ev.note, *ev.labels.values(), *(str(r) for r in ev.records)]
    for text in texts:
        if "pytorch's layout" in text.casefold() or "pytorch layout" in text.casefold():
            assert "scaled_dot_product_attention" in text or "multi_head_attention_forward" in text, text
        if "attn_output_weights" in text:
            assert "average_attn_weights" in text and "(N, L, S)" in text, text


def test_the_source_shape_prompts_say_source_and_the_positional_count_says_shared():
    """shape-tokens and shape-embedding asked for 'the input token ids' and 'the token embedding': at
    M_target ≠ M, a learner who gave the decoder's input was marked wrong by a prompt that never said which.
    pos-params counts the one learned table the encoder and the decoder share."""
    ctx = Context(CONFIG_B)  # M = 6, M_target = 5
    for qid, source, target in (("shape-tokens", "(N, M)", "(N, M_target)"),
                                ("shape-embedding", "(N, M, E)", "(N, M_target, E)")):
        q = BY_ID[qid]
        assert "source" in q.text(ctx), qid
        expected, formula = q.expected(ctx), q.formula(ctx)
        assert check(q, expected, source, ctx.symbols, formula) and not check(q, expected, target, ctx.symbols,
                                                                               formula)
    q = BY_ID["pos-params"]
    assert "The encoder and the decoder share it" in q.text(ctx)
    assert q.expected(ctx) == CONFIG_B.max_len * CONFIG_B.E  # one table, not one per stack


def _answered(q, ctx) -> bool:
    """The question's expected answer computes, and is one of its kind (a choice of its own, a number, a shape)."""
    value = q.expected(ctx)
    if q.kind == "shape":
        return isinstance(value, tuple) and all(isinstance(d, int) and d > 0 for d in value)
    if q.kind == "numeric":
        return parse_number(format_answer(q, value)) is not None
    return value in q.choices


@pytest.mark.parametrize("preset", list(PRESETS), ids=list(PRESETS))
def test_every_question_on_the_pass_or_the_text_has_an_answer_at_every_preset(preset):
    """The questions whose answers read the pass or the learner's text (the example text when none is typed),
    at every preset, with the pass read shape-only as the page reads it: from GPT-2's sizes up a real pass over
    the text is over the budget too, and the text questions still answer. The questions on experiments are
    checked at every preset by the slow test below."""
    cfg = PRESETS[preset]
    ctx = Context(cfg, trace=trace(cfg, shape_only=True))  # as the quiz page reads shapes: ui.quiz.state.context
    shown = [q for q in questions_for(None, cfg) if q.evidence == "pass_shapes"]
    assert any(q.topic == "Your text" for q in shown)
    for q in shown:
        assert _answered(q, ctx), q.id
        assert check(q, q.expected(ctx), format_answer(q, q.expected(ctx)), q.reading_symbols(ctx), q.formula(ctx))


@pytest.mark.slow
@pytest.mark.parametrize("preset", list(PRESETS), ids=list(PRESETS))
def test_the_answer_key_covers_every_question_shown_at_every_preset(preset):
    cfg = PRESETS[preset]
    ctx = Context(cfg)
    key = answer_key(cfg, ctx)
    assert [q["id"] for q in key["questions"]] == [q.id for q in questions_for(None, cfg)]
    assert all(_answered(BY_ID[q["id"]], ctx) for q in key["questions"])
