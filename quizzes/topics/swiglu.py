"""SwiGLU, the FFN of Llama: a gated product of two d_ff-wide projections, so three weight matrices."""

from core.config import LLAMA2_7B, TransformerConfig
from quizzes.questions import Question, millions, row_shape, value

TOPIC = "SwiGLU"


def params_formula(c: TransformerConfig) -> str:
    """Three E x d_ff matrices, with biases on the two that widen (d_ff each) and the one that narrows (E)."""
    return "3*E*d_ff" + (" + 2*d_ff + E" if c.bias else "")


QUESTIONS = (
    Question(
        id="swiglu-matrices", topic=TOPIC, kind="numeric",
        prompt="How many weight matrices does one SwiGLU FFN have?",
        answer=value("part_counts", "swiglu_matrices"), evidence="part_counts",
        explanation="Three: W1, the gate (E to d_ff), W3, up (E to d_ff), and W2, down (d_ff to E). The FFN "
                    "computes W2(silu(x W1) * (x W3)): the gate's SiLU decides how much of each of up's values "
                    "passes. ReLU's and GELU's FFNs have two. Counted as the nn.Linear layers of the module.",
    ),
    Question(
        id="swiglu-params", topic=TOPIC, kind="numeric", parametric=True, unit="count", expression=params_formula,
        prompt="How many parameters does one SwiGLU FFN have at E={E} and d_ff={d_ff}, with biases if the sidebar's "
               "model has them?",
        answer=value("part_counts", "swiglu_ffn"), evidence="part_counts",
        explanation="3·E·d_ff weights, against 2·E·d_ff for ReLU's FFN at the same d_ff, plus 2·d_ff + E biases "
                    "when there are biases (Llama has none). That is why Llama shrinks d_ff to about 8E/3 instead of "
                    "4E: the FFN then costs what a 4E ReLU FFN did.",
    ),
    Question(
        id="swiglu-gate", topic=TOPIC, kind="shape", parametric=True, when=lambda c: c.activation == "swiglu",
        prompt="What is the shape of the first layer's SwiGLU gate, x W1, before its SiLU?",
        answer=row_shape("swiglu_gate"), evidence="pass_shapes",
        explanation="Every position widened to d_ff: (N, M, d_ff), the same as up, x W3, which it multiplies "
                    "element by element. Only the product goes on to W2.",
    ),
    Question(
        id="swiglu-llama", topic=TOPIC, kind="numeric", tolerance=0.01, unit="millions", sizes=LLAMA2_7B,
        prompt="Llama-2-7B has E=4096 and d_ff=11008, and no biases. How many million parameters does one of its "
               "SwiGLU FFNs hold? (within 1%)",
        answer=value("part_counts", "llama7b_ffn", millions), evidence="part_counts",
        explanation="3 x 4096 x 11008 = 135,266,304, about 135.3M, twice an attention block's 67.1M; 32 layers of "
                    "them are 4.3B of the 6.7B. 11008 is 8/3 x 4096 rounded up to a multiple of 256.",
    ),
)
