"""T5's relative positions and its other parts: scores without 1/sqrt(d_k), how many parameters the bias tables
hold, what one shared embedding matrix saves, and which (query, key) pairs share a bucket."""

from core.config import TransformerConfig
from quizzes.questions import PAPER, WITH_ENCODER, Question, outcome, value

TOPIC = "Relative positions (T5)"


def relative(c: TransformerConfig) -> bool:
    """T5's bias on the scores: the questions' wording and experiment assume it."""
    return c.positional == "relative"


_FOLD = (
    "The same outputs: dividing W_q by √d_k divides every score by √d_k, so T5 folds the scaling into W_q's "
    "initialisation and leaves it out of the scores.",
    "Different outputs: only a division of the scores themselves keeps the softmax from saturating.",
    "Different outputs, and the unscaled model's attention rows are one-hot whatever W_q holds.",
)
_SHARE = (
    "Only pairs with the same offset j − i: each diagonal of the table has a bucket of its own here.",
    "Pairs with the same offset j − i, and far diagonals together too: past the exact distances, several offsets "
    "share one bucket.",
    "Pairs with the same query position i: one bucket per row.",
    "No two pairs: every (i, j) has a bucket of its own.",
)


def _fold(v: dict) -> int:
    return 0 if v["folded_difference"] <= 1e-4 else 1


def _share(v: dict) -> int:
    if not v["diagonals_shared"]:
        return 3
    return 1 if v["diagonals_merged"] else 0


def bias_formula(c: TransformerConfig) -> str:
    """One (relative_buckets, nhead) table per stack."""
    return "2*relative_buckets*nhead" if c.arch == "encoder-decoder" else "relative_buckets*nhead"


QUESTIONS = (
    Question(
        id="t5-no-scale", topic=TOPIC, kind="predict", when=relative,
        prompt="T5 divides its scores by no √d_k. Predict, then run: the same model with 1/√d_k on its scores, and "
               "without it but with every W_q divided by √d_k. What happens to the outputs?",
        choices=_FOLD, answer=outcome("relative_probe", _fold, _FOLD), evidence="relative_probe",
        explanation="q·k/√d_k = (q/√d_k)·k, and q = x W_q: dividing W_q by √d_k gives the very same scores. T5 "
                    "initialises W_q with a spread d_k^(−1/2) times smaller, so its scores start at the size the "
                    "scaling would give, and it never divides them. The run compares the two models' logits on "
                    "the same input (and a third with neither, which differs).",
    ),
    Question(
        id="t5-bias-params", topic=TOPIC, kind="numeric", parametric=True, when=relative, expression=bias_formula,
        prompt="With relative_buckets={relative_buckets} and nhead={nhead}, how many parameters do this model's "
               "relative position biases hold, over all its layers?",
        answer=value("relative_probe", "relative_parameters"), evidence="relative_probe",
        explanation="One (relative_buckets, nhead) table per stack, in its first layer: every layer of the stack "
                    "reads that one table, so the count does not grow with the layers. An encoder-decoder has two "
                    "tables (the encoder's and the decoder's self-attention; cross-attention has none): "
                    "2 · relative_buckets · nhead. Counted as the model against the same model without positions.",
    ),
    Question(
        id="t5-shared-embedding", topic=TOPIC, kind="numeric", parametric=True, when=relative, families=PAPER,
        expression="2*vocab_size*E",
        prompt="T5 uses one vocab_size × E matrix for the encoder's embedding, the decoder's and the output layer. "
               "With vocab_size={vocab_size} and E={E}, how many parameters does that save against a matrix for "
               "each of the three?",
        answer=value("relative_probe", "shared_saving"), evidence="relative_probe",
        explanation="Three matrices become one, so two vocab_size × E matrices go: 2 · vocab_size · E. In "
                    "T5-small the one matrix holds 16.4M of its 60.5M parameters; three would add 32.9M more. "
                    "With no √E on the embeddings, T5 scales the decoder output by 1/√E before the shared output "
                    "layer instead. Counted on the model built both ways.",
    ),
    Question(
        id="t5-shared-bucket", topic=TOPIC, kind="choice", parametric=True, when=relative, families=WITH_ENCODER,
        prompt="In the encoder's (M, M) bucket table at M={M}, relative_buckets={relative_buckets} and "
               "relative_max_distance={relative_max_distance}, which (query i, key j) pairs share a bucket?",
        choices=_SHARE, answer=outcome("relative_probe", _share, _SHARE), evidence="relative_probe",
        explanation="A bucket depends on the offset j − i alone, so a whole diagonal shares one. The encoder's "
                    "buckets are bidirectional: half for keys before the query, half for keys after. In each half, "
                    "small distances get a bucket each; larger ones share buckets that widen logarithmically up to "
                    "relative_max_distance, beyond which all share the last. Read off the model's own buckets at "
                    "your M: at a short M every diagonal may still have its own.",
    ),
    Question(
        id="t5-buckets-used", topic=TOPIC, kind="numeric", parametric=True, when=relative, families=WITH_ENCODER,
        prompt="At M={M}, how many different buckets does the encoder's (M, M) bucket table use, of its "
               "relative_buckets={relative_buckets}?",
        answer=value("relative_probe", "buckets_used"), evidence="relative_probe",
        explanation="Its offsets run from −(M − 1) to M − 1. Small distances each get a bucket; past them, "
                    "distances share buckets on a log scale, so far fewer buckets than offsets are used as M grows, "
                    "and never more than relative_buckets (the bucket for 'after, distance 0' is never used: "
                    "distance 0 counts as before). Counted on the model's own buckets at your M.",
    ),
)
