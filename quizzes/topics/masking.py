"""Masking: what the causal mask blocks, and the shapes of the two kinds of mask."""

from quizzes.questions import PAPER, Question, outcome, row_shape, value

TOPIC = "Masking"

_DIAGONAL = ("No: the diagonal stays visible, so a position attends to itself",
             "Yes: a position may not attend to itself")
_FUTURE = (
    "Only the outputs at that position and after it",
    "Only the outputs before that position",
    "All outputs",
)
_WHICH = (
    "Above the diagonal: key position j > query position i.",
    "Below the diagonal: key position j < query position i.",
    "The diagonal only.",
)


def _which_blocked(v: dict) -> int:
    """Read the answer off the live mask: the whole upper triangle blocked, the lower one, or neither."""
    if v["below_diagonal_blocked"]:
        return 1
    return 0 if v["blocked"] == v["M_target"] * (v["M_target"] - 1) // 2 and not v["diagonal_blocked"] else 2


QUESTIONS = (
    Question(
        id="mask-diagonal", topic=TOPIC, families=PAPER, kind="predict",
        prompt="Predict, then run: does the causal mask block the diagonal?",
        choices=_DIAGONAL,
        answer=outcome("mask_counts", lambda v: 1 if v["diagonal_blocked"] else 0, _DIAGONAL), evidence="mask_counts",
        explanation="Position i reads the decoder's input tokens 0..i and predicts the next token; its own input "
                    "token is the previous target token, not the answer. "
                    "Blocking the diagonal would leave position 0 with nothing to attend to.",
    ),
    Question(
        id="mask-blocked", topic=TOPIC,
        families=PAPER, kind="numeric", parametric=True, expression="M_target*(M_target - 1)/2",
        prompt="How many entries of the causal mask for M_target={M_target} are True (blocked)?",
        answer=value("mask_counts", "blocked"), evidence="mask_counts",
        explanation="Everything strictly above the diagonal: M_target(M_target - 1)/2 entries.",
    ),
    Question(
        id="mask-probe", topic=TOPIC, families=PAPER, kind="predict",
        prompt="Predict, then run: change one target token in the middle of the sequence. With the causal mask, "
               "which decoder outputs change?",
        choices=_FUTURE,
        answer=outcome("causal_probe",
                       lambda v: 0 if v["earlier_unchanged_with_mask"] else 2, _FUTURE),
        evidence="causal_probe",
        explanation="Earlier positions never see the changed token, so their outputs stay bit-for-bit the same; "
                    "drop the mask and they change too (the chart shows both). With M_target = 1 there is nothing "
                    "earlier to protect, so the probe runs at M_target = 2.",
    ),
    Question(
        id="mask-which", topic=TOPIC, families=PAPER, kind="choice",
        prompt="Scores are laid out with query i on row i and key j in column j. Which entries does the causal "
               "mask block?",
        choices=_WHICH, answer=outcome("mask_counts", _which_blocked, _WHICH), evidence="mask_counts",
        explanation="Query i may look at keys 0..i, so the blocked entries have j > i: the upper triangle, filled "
                    "with -inf before a softmax over each row. Masking the lower triangle and normalising columns "
                    "is the same idea transposed, and easy to mix up.",
    ),
    Question(
        id="mask-attn-shape", topic=TOPIC, families=PAPER, kind="shape", parametric=True,
        prompt="What is the shape of the decoder's causal attn_mask (tgt_mask)?",
        answer=row_shape("causal_mask"), evidence="mask_counts",
        explanation="One entry per (query, key) pair of the target: (M_target, M_target), shared by every sequence "
                    "and head.",
    ),
    Question(
        id="mask-kpm-shape", topic=TOPIC, families=PAPER, kind="shape", parametric=True,
        prompt="What is the shape of the source key_padding_mask?",
        answer=row_shape("key_padding_mask"), evidence="mask_counts",
        explanation="Padding depends on the sequence, not on the query: one flag per source token, (N, M).",
    ),
    Question(
        id="mask-dec-scores", topic=TOPIC, families=PAPER, kind="shape", parametric=True,
        prompt="What is the shape of the first decoder layer's masked self-attention weights?",
        answer=row_shape("decoder_self_scores"), evidence="pass_shapes",
        explanation="Target queries against target keys, for every sequence and head: (N, nhead, M_target, "
                    "M_target), zero above the diagonal.",
    ),
)
