"""Q, K and V: their dimensions, and which axis the softmax normalises."""

from quizzes.questions import PAPER, WITH_ENCODER, Question, fixed, outcome, row_shape

TOPIC = "Q, K and V dimensions"

_DV = (
    "Yes: all three must match or the matrix products fail.",
    "No: Q and K must share a width because they are dotted together; V's width only sets the width of each "
    "head's output. The paper (and this model) simply picks d_v = d_k = E/nhead.",
    "No: V must always be E wide.",
)
_AXIS = (
    "The last axis (keys): each query's row of weights sums to 1.",
    "The query axis: each key's column sums to 1.",
    "All L x S entries together sum to 1.",
)
_OTHER = (
    "Additive attention: a small feed-forward network scores each (q, k) pair, as in Bahdanau et al.",
    "Nothing else is possible: only a dot product can produce weights.",
    "Adding Q and V instead of multiplying Q and K.",
)

QUESTIONS = (
    Question(
        id="qkv-q-head", topic=TOPIC, families=PAPER, kind="shape", parametric=True,
        prompt="Batch first, what is the shape of one head's Q in the first encoder layer?",
        answer=row_shape("qkv_one_head"), evidence="attention_shapes",
        explanation="Each of the N sequences has M positions, each with a d_k-wide query for this head: "
                    "(N, M, d_k) with d_k = E/nhead.",
    ),
    Question(
        id="qkv-stacked", topic=TOPIC, kind="shape", parametric=True,
        prompt="This model computes all heads at once, with the heads on an axis of their own (not folded into the "
               "batch axis). What is the shape of its Q with every head stacked?",
        answer=row_shape("q_stacked"), evidence="attention_shapes",
        explanation="One projection (Q's E columns of the stacked E -> 3E product), then view(N, M, nhead, d_k) "
                    "and transpose(1, 2): (N, nhead, M, d_k), so each head is a batch of its own for the matrix "
                    "product. That is the layout PyTorch's scaled_dot_product_attention takes. nn.MultiheadAttention's "
                    "reference path, F.multi_head_attention_forward, folds the heads into the batch instead: it holds "
                    "Q as (N·nhead, M, d_k), and views it as (N, nhead, M, d_k) only to call "
                    "scaled_dot_product_attention.",
    ),
    Question(
        id="qkv-scores", topic=TOPIC, families=WITH_ENCODER, kind="shape", parametric=True,
        prompt="What is the shape of the first encoder layer's attention weights, softmax(QK^T/sqrt(d_k))?",
        answer=row_shape("attention_scores"), evidence="attention_shapes",
        explanation="For every sequence and head, an M x M table: one row per query, one column per key.",
    ),
    Question(
        id="qkv-concat", topic=TOPIC, kind="shape", parametric=True,
        prompt="After each head has weighted its values, the heads are concatenated. Shape?",
        answer=row_shape("concatenated_heads"), evidence="attention_shapes",
        explanation="nhead outputs of width d_k side by side make E again: (N, M, E), ready for W^O.",
    ),
    Question(
        id="qkv-dv", topic=TOPIC, kind="choice",
        prompt="Must V have the same width as Q and K?",
        choices=_DV, answer=fixed(1, _DV), evidence="softmax_axis",
        explanation="QK^T needs matching inner widths. V only enters through weights @ V, whose output width is "
                    "V's width; choosing d_v = d_k keeps the concatenation E wide.",
    ),
    Question(
        id="qkv-axis", topic=TOPIC, kind="predict",
        prompt="Predict, then run: the weights have shape (N, nhead, L, S), queries on rows, keys on columns. "
               "Along which axis does the softmax make them sum to 1?",
        choices=_AXIS,
        answer=outcome("softmax_axis", lambda v: 0 if v["row_sums_all_one"] else 1, _AXIS), evidence="softmax_axis",
        explanation="Each query spreads one unit of attention over the keys it may see: softmax over the last "
                    "axis (dim=-1). Normalising columns instead (dim=-2) mixes queries and is a common slip.",
    ),
    Question(
        id="qkv-other", topic=TOPIC, kind="choice",
        prompt="Scaled dot products are one way to turn (Q, K) into weights. Which other way also works?",
        choices=_OTHER, answer=fixed(0, _OTHER), evidence="score_scaling",
        explanation="Any function that gives one score per (query, key) pair can feed a softmax; additive "
                    "attention uses a tiny MLP. Dot products win on speed because they are one matrix product.",
    ),
)
