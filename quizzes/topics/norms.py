"""The norms: LayerNorm against RMSNorm, and where the norm sits (after each sub-layer, as in the paper, or
before it, as GPT-2 and Llama put it)."""

from core.config import TransformerConfig
from quizzes.experiments.norms import ABOUT_THE_SAME, PRE_POST_DRAWS
from quizzes.questions import Question, no_qk_norm, outcome, value

TOPIC = "Norms: where and which"

_DROPS = (
    "Subtracting the mean, and the bias β: RMSNorm only divides by the root mean square and multiplies by a gain.",
    "The gain γ: RMSNorm keeps the bias and the mean.",
    "Dividing by the spread: RMSNorm only subtracts the mean.",
    "Nothing: they are two names for one operation.",
)
_GRADIENT = ("Larger than with post-norm", "Smaller than with post-norm", "About the same")


def _drops(v: dict) -> int:
    """What the live norms did: RMSNorm's outputs kept a mean and it has one parameter per dimension."""
    keeps_mean = v["rmsnorm_output_mean"] > 1e-3 and v["layernorm_output_mean"] < 1e-3
    if keeps_mean and v["rmsnorm_parameters"] == v["E"] and v["layernorm_parameters"] == 2 * v["E"]:
        return 0
    return 3 if not keeps_mean else 1


def _pre_against_post(v: dict) -> int:
    """Pre-norm's gradient larger (0), smaller (1) or about the same (2) as post-norm's at the deepest stack: the
    ratio averaged over several seeded stacks, within a factor of ABOUT_THE_SAME either way (one stack's ratio
    swings with its draw)."""
    if v["ratio"] > ABOUT_THE_SAME:
        return 0
    return 1 if v["ratio"] < 1 / ABOUT_THE_SAME else 2


def norms_formula(c: TransformerConfig) -> str:
    """A norm before or after each sub-layer (two per layer, three in the paper's decoder), and with pre-norm
    a final one after each stack."""
    per_layer = "5*layers" if c.arch == "encoder-decoder" else "2*layers"
    stacks = 2 if c.arch == "encoder-decoder" else 1
    return per_layer + (f" + {stacks}" if c.norm_first else "")


QUESTIONS = (
    Question(
        id="norm-rms-params", topic=TOPIC, kind="numeric", parametric=True, expression="E",
        prompt="How many parameters does one RMSNorm over E={E} have?",
        answer=value("norm_compare", "rmsnorm_parameters"), evidence="norm_compare",
        explanation="One gain per dimension, γ: E. RMSNorm computes x / sqrt(mean(x²) + ε) · γ, with no bias.",
    ),
    Question(
        id="norm-ln-params", topic=TOPIC, kind="numeric", parametric=True, expression="2*E",
        prompt="And one LayerNorm over E={E}, with its bias?",
        answer=value("norm_compare", "layernorm_parameters"), evidence="norm_compare",
        explanation="A gain γ and a bias β per dimension: 2E. LayerNorm computes (x − mean(x)) / sqrt(var(x) + ε) "
                    "· γ + β.",
    ),
    Question(
        id="norm-drops", topic=TOPIC, kind="choice",
        prompt="What does RMSNorm drop from LayerNorm?",
        choices=_DROPS, answer=outcome("norm_compare", _drops, _DROPS), evidence="norm_compare",
        explanation="RMSNorm keeps the rescaling and drops the centring: it does not subtract the mean, and it has "
                    "no bias β to shift the result back. On inputs of mean 3 the run shows LayerNorm's outputs "
                    "centred at 0 and RMSNorm's still well above it, at a root mean square of 1. It is cheaper, and "
                    "Llama trains as well with it.",
    ),
    Question(
        id="norm-count", topic=TOPIC, kind="numeric", parametric=True, expression=norms_formula, when=no_qk_norm,
        prompt="How many norms (LayerNorm or RMSNorm modules) does the sidebar's model have, with layers={layers}?",
        answer=value("family_parts", "norms"), evidence="family_parts",
        explanation="One norm per sub-layer: two in an encoder layer or a decoder-only layer, three in the paper's "
                    "decoder layer (5 per pair of layers). Pre-norm adds one final norm after each stack, since the "
                    "last residual sum would otherwise leave unnormalised (GPT-2's ln_f). Counted on the module tree.",
    ),
    Question(
        id="norm-pre-post", topic=TOPIC, kind="predict",
        prompt="Predict, then run: the same seeded stack of 24 layers, run with the norm after each sub-layer "
               "(post-norm, the paper's) and before it (pre-norm, with a final norm). The gradient norm that reaches "
               "the embeddings with pre-norm is...",
        choices=_GRADIENT,
        answer=outcome("pre_post_gradient", _pre_against_post, _GRADIENT),
        evidence="pre_post_gradient",
        explanation="Pre-norm computes x + sublayer(norm(x)): the residual path from the loss down to the embeddings "
                    "passes no norm at all, only the final one, so the gradient keeps a route that no layer rescales. "
                    "Post-norm puts every residual sum through a norm, 48 of them at 24 layers, and each rescales the "
                    "gradient on its way down. With the paper's parts (LayerNorm, ReLU, biases) pre-norm's comes out "
                    "larger at 24 layers for every seed and width the tests try, by a modest factor at "
                    "initialisation; the trouble post-norm has in training deep stacks without a warm-up comes later. "
                    "With Llama's parts (RMSNorm, SwiGLU, no biases) the two come out about the same before any "
                    "training. One stack's ratio swings with its random draw, so the run draws "
                    f"{PRE_POST_DRAWS} seeded stacks and reads their average ratio: within a factor of "
                    f"{ABOUT_THE_SAME:g} either way is about the same. It uses your norm, activation and K/V heads at "
                    "capped widths; the chart shows the first stack at every depth from 1 to 24.",
    ),
)
