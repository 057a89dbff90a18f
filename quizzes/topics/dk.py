"""The choice of d_k: how E is split across heads, and why the scores are scaled."""

from quizzes.experiments import ENTROPY_KEYS, SCALE_WIDTHS
from quizzes.questions import Question, even_heads, fixed, head_projections, multi_head, outcome, row_shape, value

TOPIC = "The choice of d_k"

_SCALE = (
    "To make the attention weights sum to 1.",
    "q·k adds up d_k products, so its variance grows with d_k; dividing by sqrt(d_k) keeps it near 1, "
    "so the softmax does not saturate onto one key and its gradients do not vanish.",
    "To normalise the length of the value vectors.",
    "Because the paper's d_k is 64 and sqrt(64) = 8 is a round number.",
)
_WIDTH = (
    "d_k, the width of one head's queries and keys (E/nhead).",
    "E, the model width, whatever nhead is.",
    "The sequence length, so longer inputs get smaller scores.",
)
_NHEAD = ("It stays the same", "It grows with nhead", "It shrinks as nhead grows")
_ENTROPY = ("Lower: the softmax is more peaked", "Higher: the softmax is flatter", "The same")
ROUNDING = 1e-9  # relative: the entropies are computed in float64


def entropy_change(v: dict) -> int:
    """The unscaled softmax's entropy against the scaled one's, by the sign of the difference alone:
    multiplying scores by sqrt(d_k) > 1 strictly lowers a softmax's entropy unless all its scores are
    equal, so any difference beyond float rounding is the answer, however small."""
    unscaled, scaled = v["entropy_unscaled"], v["entropy_scaled"]
    if abs(unscaled - scaled) <= ROUNDING * max(1.0, abs(unscaled), abs(scaled)):
        return 2
    return 0 if unscaled < scaled else 1

QUESTIONS = (
    Question(
        id="dk-value", topic=TOPIC, kind="numeric", parametric=True, expression="E/nhead",
        prompt="With E={E} and nhead={nhead}, how wide is each head's query (d_k)?",
        answer=lambda ctx: row_shape("W_Q")(ctx)[-1], evidence="head_options",
        when=lambda c: even_heads(c) and head_projections(c),
        explanation="The E columns of the projection are split evenly over the heads: d_k = E / nhead. "
                    "Concatenating the heads gives back nhead × d_k = E.",
    ),
    Question(
        id="dk-count", topic=TOPIC, kind="numeric", parametric=True,
        prompt="How many values of nhead, from 1 up to the config's limit of 1024, does E={E} allow?",
        answer=value("head_options", "count"), evidence="head_options",
        explanation="nhead must divide E so every head gets a whole number of dimensions; the live check builds "
                    "a MultiHeadAttention for every candidate and counts the ones that do not refuse.",
    ),
    Question(
        id="dk-refused", topic=TOPIC, kind="numeric", parametric=True,
        prompt="What is the smallest nhead above 1 that E={E} refuses?",
        answer=value("head_options", "smallest_refused"), evidence="head_options",
        explanation="The first whole number that does not divide E. Here, as in the paper, d_k = E/nhead, so "
                    "nhead=1 gives the widest head, d_k = E. That split is a choice, not a law of attention: Gemma "
                    "7B, for one, has 16 heads of d_k = 256 on E = 3072.",
    ),
    Question(
        id="dk-wq", topic=TOPIC, kind="shape", parametric=True,
        prompt="Written so that q = x @ W^Q, what is the shape of one head's W^Q?",
        answer=row_shape("W_Q"), evidence="pass_shapes", when=head_projections,
        explanation="It maps an E-wide token vector to a d_k-wide query: (E, d_k). The model stores all heads' "
                    "W^Q side by side in one (E, E) layer, W_q, transposed in PyTorch's (out, in) order: head h's "
                    "W^Q is the transpose of its rows h·d_k to (h+1)·d_k − 1.",
    ),
    Question(
        id="dk-params-nhead", topic=TOPIC, when=multi_head, kind="predict",
        prompt="Predict, then run: at E={E}, build the attention block with each nhead that E allows. How does "
               "its parameter count change with nhead?",
        choices=_NHEAD,
        answer=outcome("head_options", lambda v: 0 if v["same_for_all"] else 1, _NHEAD), evidence="head_options",
        explanation="More heads means narrower heads: nhead blocks of E x d_k always add up to E x E per "
                    "projection, so the count is 4(E² + E) whatever nhead is. (E=1 allows only nhead=1, so there "
                    "is nothing to compare at that E, but the formula holds at every E.)",
    ),
    Question(
        id="dk-attn-params", topic=TOPIC,
        when=lambda c: multi_head(c) and c.bias,
        kind="numeric", parametric=True, unit="count", expression="4*E^2 + 4*E",
        prompt="How many parameters (weights and biases of W^Q, W^K, W^V and W^O) does one attention block "
               "have at E={E}?",
        answer=value("parameter_counts", "attention_block"), evidence="parameter_counts",
        explanation="Four E x E matrices and four E-long biases: 4E² + 4E, read off a module built on the meta "
                    "device.",
    ),
    Question(
        id="dk-why-scale", topic=TOPIC, kind="choice",
        prompt="Why are the attention scores divided by sqrt(d_k)?",
        choices=_SCALE, answer=fixed(1, _SCALE), evidence="score_scaling",
        explanation="With independent entries of mean 0 and variance 1 (the paper's assumption), each product "
                    "q_i k_i has variance 1 and d_k of them add up to variance d_k. Large scores push softmax "
                    "towards a one-hot vector, where its gradient is almost zero; the scaling undoes the growth.",
    ),
    Question(
        id="dk-which-width", topic=TOPIC, kind="choice",
        prompt="In multi-head attention, each head's scores are divided by the square root of which width?",
        choices=_WIDTH, answer=outcome("score_scaling", lambda v: SCALE_WIDTHS.index(v["model_divides_by"]), _WIDTH),
        evidence="score_scaling",
        explanation="Each score is one head's q·k, a sum over that head's d_k dimensions, so d_k sets its spread. "
                    "With one head d_k equals E, so there both widths are the same number, which is why single-head "
                    "write-ups divide by sqrt(E).",
    ),
    Question(
        id="dk-variance", topic=TOPIC, kind="numeric", parametric=True, tolerance=0.2, expression="d_k",
        prompt="q and k have {d_k} entries each, all independent with mean 0 and variance 1. About what is the "
               "variance of the raw dot product q·k? (within 20%)",
        answer=value("score_scaling", "variance_unscaled_at_d_k"), evidence="score_scaling",
        explanation="Each product q_i k_i of two independent mean-0, variance-1 numbers has variance 1 (a "
                    "non-zero mean would make it larger), and the variance of a sum of independent terms is the sum "
                    "of their variances: d_k terms give about d_k. The measured value is from 4096 random pairs.",
    ),
    Question(
        id="dk-entropy", topic=TOPIC, kind="predict",
        prompt=f"Predict, then run: at d_k={{d_k}}, over {ENTROPY_KEYS} keys per softmax, compared with the scaled "
               "scores, the softmax of the unscaled scores has an entropy that is...",
        choices=_ENTROPY,
        answer=outcome("score_scaling", entropy_change, _ENTROPY),
        evidence="score_scaling",
        explanation="Unscaled scores are sqrt(d_k) times larger, which sharpens the softmax; its entropy drops "
                    "towards 0 (all weight on one key). That holds for any d_k above 1, however small the drop: "
                    "multiplying scores by a number above 1 always lowers a softmax's entropy unless all the scores "
                    "are equal. At d_k = 1 the two are identical. The run uses "
                    f"{ENTROPY_KEYS} keys whatever M is: over a single key (M = 1) the one weight is 1 and both "
                    "entropies are 0, which would say nothing about the scaling.",
    ),
)
