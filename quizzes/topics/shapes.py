"""Shapes of the 14 tensors and the extras, for the config in the sidebar."""

from quizzes.questions import PAPER, WITH_ENCODER, Question, row_shape, value

TOPIC = "Shapes"

QUESTIONS = (
    Question(
        id="shape-tokens", topic=TOPIC, families=PAPER, kind="shape", parametric=True,
        prompt="Shape of the source's input token ids (the encoder's input)?", answer=row_shape("input_tokens"),
        evidence="pass_shapes",
        explanation="N sequences of M integer ids: (N, M).",
    ),
    Question(
        id="shape-embedding", topic=TOPIC, families=PAPER, kind="shape", parametric=True,
        prompt="Shape of the source's token embedding?", answer=row_shape("token_embedding"), evidence="pass_shapes",
        explanation="Every id becomes an E-wide row of the embedding table: (N, M, E).",
    ),
    Question(
        id="shape-memory", topic=TOPIC, families=PAPER, kind="shape", parametric=True,
        prompt="Shape of the encoder output (the memory)?", answer=row_shape("encoder_output"), evidence="pass_shapes",
        explanation="Every layer keeps (N, M, E); the decoder projects this memory into its cross-attention keys "
                    "and values with its own W^K and W^V.",
    ),
    Question(
        id="shape-target", topic=TOPIC, families=PAPER, kind="shape", parametric=True,
        prompt="Shape of the target embedding (M_target={M_target})?", answer=row_shape("target_embedding"),
        evidence="pass_shapes",
        explanation="The decoder side runs over the target length: (N, M_target, E).",
    ),
    Question(
        id="shape-cross", topic=TOPIC, families=PAPER, kind="shape", parametric=True,
        prompt="Shape of the first decoder layer's cross-attention weights (M={M}, M_target={M_target})?",
        answer=row_shape("cross_scores"), evidence="pass_shapes",
        explanation="Queries come from the target, keys from the source: (N, nhead, M_target, M). It is only "
                    "square when the two lengths happen to be equal.",
    ),
    Question(
        id="shape-probs", topic=TOPIC, families=PAPER, kind="shape", parametric=True,
        prompt="Shape of the output probabilities?", answer=row_shape("output_probabilities"), evidence="pass_shapes",
        explanation="A distribution over the vocabulary at every target position: (N, M_target, vocab_size).",
    ),
    Question(
        id="shape-ffn-out", topic=TOPIC, families=WITH_ENCODER, kind="shape", parametric=True,
        prompt="Shape of the first encoder layer's FFN output?", answer=row_shape("ffn_output"), evidence="pass_shapes",
        explanation="The FFN returns to width E so the residual add works: (N, M, E).",
    ),
    Question(
        id="shape-pytorch-default", topic=TOPIC, kind="shape", parametric=True, expression="(M, N, E)",
        prompt="nn.TransformerEncoderLayer defaults to batch_first=False. What shape must the source embeddings "
               "have for it (our batch is N={N}, M={M}, E={E})?",
        answer=value("batch_first", "pytorch_default"), evidence="batch_first",
        explanation="Sequence first: (M, N, E). This app is batch-first everywhere, (N, M, E); pass "
                    "batch_first=True to PyTorch's layers to match.",
    ),
)
