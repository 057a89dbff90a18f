"""Facts the explanations state in words, checked against the live model."""

import re
from pathlib import Path

import pytest

from core.config import PAPER_BASE
from core.model import Transformer
from quizzes import BY_ID, QUESTIONS, TOPICS


def _count(cfg) -> int:
    return sum(p.numel() for p in Transformer.from_config(cfg, device="meta").parameters())


def test_the_paper_base_explanation_counts_what_a_larger_vocabulary_adds():
    """With the tied matrix, a token adds E weights to the shared matrix and one bias to the output
    layer: 513 parameters, not 512."""
    text = BY_ID["params-paper-base"].explanation
    base = _count(PAPER_BASE)
    per_thousand = _count(PAPER_BASE.replace(vocab_size=PAPER_BASE.vocab_size + 1000)) - base
    assert per_thousand == 513_000
    assert f"add {per_thousand:,} parameters" in text
    tokens_for_65m = PAPER_BASE.vocab_size + (65_000_000 - base) * 1000 / per_thousand
    assert f"about {round(tokens_for_65m, -2):,.0f} tokens would make 65M" in text
    assert f"About {base / 1e6:.0f} million with the one tied matrix" in text
    untied = _count(PAPER_BASE.replace(tie_embeddings=False))
    assert f"about {untied / 1e6:.0f} million" in text


def test_the_skip_count_explanation_counts_pytorchs_layer_norms():
    """Ours has a LayerNorm after each of the 5·layers residual additions; nn.Transformer ends each
    stack with one more (its encoder's and decoder's final norm), which follows no addition."""
    import warnings

    from torch import nn

    assert "nn.Transformer has 5·layers + 2 LayerNorms" in BY_ID["skip-count"].explanation
    for layers in (1, 2, 3):
        with warnings.catch_warnings():  # its note on nested tensors, which need batch_first=True
            warnings.simplefilter("ignore")
            torch_model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=layers, num_decoder_layers=layers,
                                         dim_feedforward=16, device="meta")
        assert sum(isinstance(m, nn.LayerNorm) for m in torch_model.modules()) == 5 * layers + 2


def test_the_skip_gradient_explanation_allows_the_answers_the_live_run_gives():
    """Removing the skips makes the gradient at the embeddings smaller at the default config, but at three
    layers of E=64 over 16 positions it comes out larger: the explanation said the skip kept 'a direct
    route', as if the answer were always 'smaller', and in this post-norm model that route still passes
    every LayerNorm."""
    from core import DEFAULT, TransformerConfig
    from quizzes import Context

    q = BY_ID["skip-gradient"]
    assert q.expected(Context(DEFAULT)) == q.choices[0]  # smaller
    three_layers = TransformerConfig(N=2, M=16, E=64, nhead=2, layers=3, vocab_size=50)
    assert q.expected(Context(three_layers)) == q.choices[1]  # larger
    assert "either way round" in q.explanation and "LayerNorm" in q.explanation
    assert "direct route" not in q.explanation


def test_the_skip_output_explanation_lets_the_cosine_fall_with_depth():
    """It said that with skips 'the cosine stays high'; in this post-norm model the output-input cosine
    with skips falls with depth, and a narrow FFN can bring it below the one without skips."""
    from core import DEFAULT, TransformerConfig
    from quizzes.experiments import run
    from quizzes import Context

    q = BY_ID["skip-output"]
    cosines = [run("residual_ablation", DEFAULT.replace(layers=depth)).values["cosine_with_skips"]
               for depth in (1, 2, 4, 8, 16)]
    assert cosines == sorted(cosines, reverse=True) and cosines[-1] < cosines[0] - 0.2
    narrow = TransformerConfig(N=2, M=8, E=1, nhead=1, layers=8, vocab_size=50, d_ff=1, seed=2)
    assert q.expected(Context(narrow)) == q.choices[1]  # more like its input without the skips
    assert "stays high" not in q.explanation
    assert "falls as layers add up" in q.explanation and "either may come out higher" in q.explanation


def test_the_quiz_docs_count_the_bank_as_it_is():
    """docs/quiz.md counts the questions, topics, parametric answers and conceptual (stored) choices, and the
    questions each family has with its default parts; a question added or moved must not leave those words
    behind."""
    from core import TransformerConfig
    from core.config import GPT2_SMALL, LLAMA2_70B
    from quizzes import questions_for

    docs = (Path(__file__).resolve().parents[2] / "docs" / "quiz.md").read_text(encoding="utf-8")
    text = " ".join(docs.split())
    stored = sum(q.stored for q in QUESTIONS)
    parametric = sum(q.parametric for q in QUESTIONS)
    assert re.search(rf"\b{len(QUESTIONS)} questions in {len(TOPICS)} topics; {parametric} of them are parametric, "
                     rf"and {stored} conceptual ones keep their right choice\b", text)
    families = ", ".join(f"{arch} {len(questions_for(None, TransformerConfig(arch=arch)))}"
                         for arch in ("encoder-decoder", "decoder-only", "encoder-only"))
    assert (f"With each family's default parts: {families}; Llama-2-70B {len(questions_for(None, LLAMA2_70B))}, "
            f"GPT-2 small {len(questions_for(None, GPT2_SMALL))}.") in text
    n = len(questions_for(None, TransformerConfig(arch="decoder-only")))
    assert f'"{n} of {len(QUESTIONS)} questions apply to decoder-only"' in text


def test_a_stored_answer_is_one_of_its_choices_at_every_config():
    """A question's ``stored`` flag, which the README's count reads, is set by ``fixed``: every stored answer
    is one of the question's own choices and the same at every config."""
    from core import DEFAULT
    from quizzes import Context

    stored = [q for q in QUESTIONS if q.stored]
    assert stored and all(q.kind == "choice" and not q.parametric for q in stored)
    small, other = Context(DEFAULT), Context(DEFAULT.replace(E=32, nhead=4, M=12))
    for q in stored:
        assert q.expected(small) == q.expected(other) and q.expected(small) in q.choices


def _skip_answers(seeds, widths, M):
    """(seed, E, layers) -> the skip-gradient and skip-output answers, as choice indices, over layers 1 to 8."""
    from core import TransformerConfig, divisors
    from quizzes import Context

    grad, likeness = BY_ID["skip-gradient"], BY_ID["skip-output"]
    answers = {}
    for seed in seeds:
        for E in widths:
            for layers in range(1, 9):
                nhead = max(d for d in divisors(E) if d <= 2)
                ctx = Context(TransformerConfig(N=1, M=M, E=E, nhead=nhead, layers=layers, vocab_size=20, seed=seed))
                answers[seed, E, layers] = (grad.choices.index(grad.expected(ctx)),
                                            likeness.choices.index(likeness.expected(ctx)))
    return answers


def _check_skip_sweep(answers):
    """What the two explanations say of 1 to 8 layers: the output with skips is the more like its input at
    E = 5 and above; the gradient without them comes out smaller for most weights, and otherwise mostly at a
    wide E."""
    assert [key for key, (_, like) in answers.items() if key[1] >= 5 and like != 0] == []
    for depth in range(1, 9):
        at_depth = [g for (_, _, layers), (g, _) in answers.items() if layers == depth]
        assert sum(g == 0 for g in at_depth) >= 0.75 * len(at_depth), depth
    other = [E for (_, E, _), (g, _) in answers.items() if g != 0]
    assert sum(E > 16 for E in other) >= 0.75 * len(other)


def test_the_skip_predictions_hold_where_their_explanations_say_over_a_sweep_of_widths_and_depths():
    """The skip questions measured the other outcome in 16 of 288 configs at seed 0, and the caveat named only
    'a large depth'. At M = 1 the probe ran over one position, where attention has nothing to mix and the
    token's direction lasted without the skips (at E = 6 with 5 layers, E = 32 with 7, ...): it now runs over
    SKIP_POSITIONS positions whatever M is, and the explanations name the conditions this sweep checks."""
    from core import TransformerConfig
    from quizzes.experiments import run
    from quizzes.experiments.layers import SKIP_POSITIONS

    widths = (1, 3, 4, 5, 6, 11, 16, 32, 64)
    _check_skip_sweep(_skip_answers([0], widths, M=1))
    one, eight = (run("residual_ablation", TransformerConfig(M=M, E=12, nhead=2, layers=5)).values for M in (1, 8))
    assert one == eight  # the same probe whatever M is
    grad, likeness = BY_ID["skip-gradient"].explanation, BY_ID["skip-output"].explanation
    assert all(f"{SKIP_POSITIONS} positions whatever M is" in text for text in (grad, likeness))
    assert "either way round at any depth from 1 layer, most often at a wide E (above 16)" in grad
    assert "from 1 to 8 layers the output with skips is the more like its input at E = 5 and above" in likeness
    assert "past 8 layers at any width" in likeness


@pytest.mark.slow
def test_the_skip_sweep_over_every_width_up_to_64_at_three_seeds():
    """The same sweep over every E from 1 to 64 and every depth from 1 to 8, at seeds 0, 1 and 2."""
    _check_skip_sweep(_skip_answers([0, 1, 2], range(1, 65), M=8))
