"""Positional encoding: added, not concatenated; sinusoidal against learned."""

from quizzes.questions import PAPER, Question, added_positions, fixed, outcome, param, row_shape

TOPIC = "Positional encoding"

_ADD = (
    "Adding keeps the width at E, so no later weight matrix grows; the model can learn to keep content and "
    "position in different directions of the same space.",
    "Concatenating would lose the token's identity.",
    "Adding is required because the encoding has only one number per position.",
)
_PAST = (
    "It raises an error: the table has no row for that position.",
    "It wraps around to position 0.",
    "It extrapolates the pattern of the earlier rows.",
    "It returns a vector of zeros.",
)

QUESTIONS = (
    Question(
        id="pos-shape", topic=TOPIC, families=PAPER, when=added_positions, kind="shape", parametric=True,
        prompt="What is the shape of the positional encoding added to the source embeddings?",
        answer=row_shape("positional_encoding"), evidence="learned_positions",
        explanation="One E-wide vector per position, the same for every sequence: (M, E). Broadcasting adds it to "
                    "each of the N sequences.",
    ),
    Question(
        id="pos-sum", topic=TOPIC, when=added_positions, kind="shape", parametric=True,
        prompt="(N, M, E) token embeddings plus the (M, E) positional encoding gives what shape?",
        answer=row_shape("summed_embedding"), evidence="pass_shapes",
        explanation="Broadcasting lines shapes up from the right and repeats the missing batch axis: (N, M, E).",
    ),
    Question(
        id="pos-add", topic=TOPIC, when=added_positions, kind="choice",
        prompt="Why is the position vector added to the token embedding rather than concatenated to it?",
        choices=_ADD, answer=fixed(0, _ADD), evidence="permutation",
        explanation="In a space of E dimensions there is room for both signals; a concatenation would work too, "
                    "but every matrix after it would have to be wider.",
    ),
    Question(
        id="pos-past-max", topic=TOPIC, kind="predict",
        prompt="Predict, then run: a learned positional table has max_len={max_len} rows. You ask it for "
               "{max_len_plus_one} positions.",
        choices=_PAST,
        answer=outcome("learned_positions", lambda v: 0 if v["learned_fails_past_max_len"] else 2, _PAST),
        evidence="learned_positions",
        explanation="A learned table is a (max_len, E) parameter: row p exists only for p < max_len. Sinusoids are a "
                    "formula, so they give a vector for any position.",
    ),
    Question(
        id="pos-params", topic=TOPIC, families=PAPER, kind="numeric", parametric=True, unit="count",
        when=lambda c: c.positional != "relative",  # T5's tables, one per stack: asked in quizzes.topics.t5
        expression=lambda c: "max_len*E" if c.positional == "learned" else "0",
        prompt="With {positional} positional encoding and max_len={max_len}, how many trainable parameters does "
               "the model's positional encoding have? (The encoder and the decoder share it.)",
        answer=param("positional table"), evidence="learned_positions",
        explanation="Sinusoids are computed, not learned: 0. A learned table has max_len x E entries, and there is "
                    "one: the encoder and the decoder both read their positions from it.",
    ),
)
