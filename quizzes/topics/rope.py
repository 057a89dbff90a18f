"""Rotary positions (RoPE): it turns queries and keys, adds no parameters, and makes q·k depend on the offset
between two positions only."""

from quizzes.questions import Question, outcome, row_shape, value

TOPIC = "Rotary positions (RoPE)"

_WHAT = (
    "Each query and each key: every pair of dimensions is turned by an angle that grows with the position. "
    "Values and the embeddings are left alone.",
    "The token embeddings, before the first layer, as the sinusoids are added.",
    "Queries, keys and values alike.",
    "The attention weights, after the softmax.",
)
_RELATIVE = (
    "The same for every s: with RoPE, q·k depends on the offset i − j only.",
    "It changes with s, as it does when sinusoids are added to the embeddings.",
    "It is 0 for every s.",
)


def _what(v: dict) -> int:
    if v["q_turned"] and v["k_turned"] and not v["v_turned"] and not v["input_changed"]:
        return 0
    if v["input_changed"]:
        return 1
    return 2 if v["v_turned"] else 3


QUESTIONS = (
    Question(
        id="rope-what", topic=TOPIC, kind="predict",
        prompt="Predict, then run: the same model with RoPE and with no positions at all. Which tensors does RoPE "
               "change?",
        choices=_WHAT, answer=outcome("rope_probe", _what, _WHAT), evidence="rope_probe",
        explanation="RoPE adds nothing to the embeddings. Inside every attention block it turns q and k, pair of "
                    "dimensions by pair, by position × a rate that falls from 1 for the first pair to "
                    "10000^(−(d_k − 2)/d_k) for the last (1/1000 at d_k = 8; the run's table gives it at your d_k); "
                    "v is not turned, so what a head reads out is untouched. Position 0 is turned by angle 0, so the "
                    "run needs a second position. It compares each tensor of the first layer with and without RoPE, "
                    "on the same weights.",
    ),
    Question(
        id="rope-params", topic=TOPIC, kind="numeric", expression="0",
        prompt="How many trainable parameters does RoPE add to a model?",
        answer=value("rope_probe", "rope_parameters"), evidence="rope_probe",
        explanation="None: the angles are a formula of the position and the pair, like the sinusoids, and are "
                    "computed for any length. A learned positional table has max_len x E; RoPE's rotation table, "
                    "(M, d_k), is made afresh each pass. The count compares the same model with RoPE and without.",
    ),
    Question(
        id="rope-table", topic=TOPIC, kind="shape", parametric=True, when=lambda c: c.positional == "rope",
        prompt="What is the shape of RoPE's rotation table, the angle for every position and dimension of one head?",
        answer=row_shape("rotation_table"), evidence="pass_shapes",
        explanation="One angle per position and dimension of a head, (M, d_k): the d_k/2 pair angles written twice, "
                    "as Hugging Face's rotate_half lays them out (dimension i pairs with i + d_k/2). Every head and "
                    "every layer uses the same table.",
    ),
    Question(
        id="rope-pairs", topic=TOPIC, kind="numeric", parametric=True, expression="d_k/2",
        when=lambda c: c.d_k % 2 == 0,
        prompt="With d_k={d_k}, how many pairs of dimensions does RoPE turn in each head, each at a rate of its own?",
        answer=value("rope_probe", "pairs"), evidence="rope_probe",
        explanation="A turn needs a plane, two dimensions: d_k/2 pairs, pair i at rate 10000^(−2i/d_k). The fast "
                    "pairs tell near positions apart, the slow ones far positions. Counted as the distinct rates in "
                    "the rotation table at your d_k; RoPE needs an even d_k.",
    ),
    Question(
        id="rope-relative", topic=TOPIC, kind="predict",
        prompt="Predict, then run: turn a query at position i and a key at position j, and take q·k. Then move "
               "both on by s, to i + s and j + s. What happens to q·k as s grows?",
        choices=_RELATIVE, answer=outcome("rope_probe", lambda v: 0 if v["relative"] else 1, _RELATIVE),
        evidence="rope_probe",
        explanation="Turning q by angle iθ and k by jθ leaves their product depending on (i − j)θ only: two "
                    "rotations of the same plane compose, and the shared s cancels. So attention sees how far apart "
                    "two tokens are, not where they are. The chart sets it against sinusoids added to the vectors, "
                    "whose q·k moves with s.",
    ),
)
