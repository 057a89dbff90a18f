"""'Outputs (shifted right)' and next-token targets."""

from quizzes.questions import PAPER, Question, fixed, row_shape, value

TOPIC = "Outputs shifted right"

_MEANING = (
    "The decoder reads a start token followed by the target without its last token, so position i predicts "
    "target token i having seen only the tokens before it.",
    "The decoder's outputs are moved one place to the right after the softmax.",
    "The target is reversed before it enters the decoder.",
)
_LABEL = (
    "The token that follows x[t] in the text: y is x shifted one place to the left.",
    "The same token as x[t].",
    "The token before x[t].",
)

QUESTIONS = (
    Question(
        id="shift-meaning", topic=TOPIC, families=PAPER, kind="choice",
        prompt="What does 'outputs (shifted right)' mean for the decoder's input?",
        choices=_MEANING, answer=fixed(0, _MEANING), evidence="shift_right",
        explanation="Shifting right by one inserts the start token and drops the last token, so the input at "
                    "position i is the label of position i-1. Together with the causal mask, no position can "
                    "read its own answer.",
    ),
    Question(
        id="shift-start", topic=TOPIC, families=PAPER, kind="numeric",
        prompt="In this app's trace, what token id does every decoder input start with (the start token)?",
        answer=lambda ctx: int(ctx.value("shift_right", "decoder_input")[0]), evidence="shift_right",
        explanation="Id 0 is padding here and id 1 the start token; the decoder's first input is always the start. "
                    "(With vocab_size = 2 there is no other id, so every content token is id 1 as well.)",
    ),
    Question(
        id="shift-targets", topic=TOPIC, families=PAPER, kind="numeric", parametric=True, expression="M_target",
        prompt="A decoder input of M_target={M_target} tokens gives how many next-token predictions (labels) per "
               "sequence?",
        answer=value("shift_right", "targets_per_sequence"), evidence="shift_right",
        explanation="Every position predicts one token, so one sequence trains M_target predictions at once.",
    ),
    Question(
        id="shift-labels", topic=TOPIC, families=PAPER, kind="choice",
        prompt="A notebook builds x = data[i:i+8] and y = data[i+1:i+9]. What is y[t]?",
        choices=_LABEL, answer=fixed(0, _LABEL), evidence="shift_right",
        explanation="y is the next token at every position; seen from y, the input x is shifted right.",
    ),
    Question(
        id="shift-tokens-shape", topic=TOPIC, families=PAPER, kind="shape", parametric=True,
        prompt="What is the shape of the decoder's input token ids (the shifted-right target)?",
        answer=row_shape("target_tokens"), evidence="pass_shapes",
        explanation="N sequences of M_target ids: (N, M_target).",
    ),
)
