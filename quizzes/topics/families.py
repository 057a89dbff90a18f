"""The families: what a decoder-only (GPT, Llama) or an encoder-only (BERT) model keeps of the paper's
encoder-decoder, and what disappears with the second stack."""

from core.config import TransformerConfig
from quizzes.questions import DECODER_ONLY, ENCODER_ONLY, ONE_STACK, Question, outcome, row_shape, value

TOPIC = "Architecture families"

_GONE = (
    "Cross-attention, with its norm: there is no encoder memory to read.",
    "The masked self-attention: the causal mask does the same work.",
    "The FFN: attention alone is enough in one stack.",
    "Nothing: each layer is the paper's decoder layer, whole.",
)
_TARGET = (
    "It is gone: the model reads one sequence of M tokens, and its logits are (N, M, vocab_size).",
    "It stays, as the length of the generated text.",
    "It becomes the context length, max_len.",
)
_REACH_DECODER = (
    "Only the logits at that position and after it",
    "Only the logits before that position",
    "Every position's logits",
)
_REACH_ENCODER = (
    "Every position's logits: nothing is masked, so every token reads every other",
    "Only the logits at that position and after it",
    "Only the logits at that position",
)


def _gone(v: dict) -> int:
    """The part the live count finds missing: no cross-attention blocks, or none of the others."""
    if v["cross_attention_blocks"] == 0 and v["self_attention_blocks"] and v["ffn_blocks"]:
        return 0
    return 3 if v["cross_attention_blocks"] else (1 if not v["self_attention_blocks"] else 2)


def _reach_decoder(v: dict) -> int:
    return 0 if v["later_moved"] and not v["earlier_moved"] else (1 if v["earlier_moved"] and not v["later_moved"]
                                                                   else 2)


def _reach_encoder(v: dict) -> int:
    if v["earlier_moved"] and v["later_moved"]:
        return 0
    return 1 if v["later_moved"] else 2


def attention_blocks(c: TransformerConfig) -> str:
    """Two per decoder layer and one per encoder layer in the paper's model; one per layer in a single stack."""
    return "3*layers" if c.arch == "encoder-decoder" else "layers"


QUESTIONS = (
    Question(
        id="fam-gone", topic=TOPIC, kind="predict", families=DECODER_ONLY,
        prompt="Predict, then count: a decoder-only model keeps the paper's decoder layers (layers={layers}). What "
               "has gone from each of them?",
        choices=_GONE, answer=outcome("family_parts", _gone, _GONE), evidence="family_parts",
        explanation="A decoder-only model has no encoder, so there is no memory for cross-attention to read: each "
                    "layer keeps its masked self-attention and its FFN and loses the middle sub-layer with its norm. "
                    "The count is read off the model built at your sizes; the chart sets the three families side by "
                    "side.",
    ),
    Question(
        id="fam-target", topic=TOPIC, kind="choice", families=ONE_STACK,
        prompt="The paper's model reads a source of M tokens and a target of M_target. What becomes of M_target in "
               "the sidebar's {arch} model?",
        choices=_TARGET,
        answer=outcome("family_parts", lambda v: 1 if v["has_target"] else 0, _TARGET), evidence="family_parts",
        explanation="One stack reads one sequence. A decoder-only model predicts the next token at every one of its M "
                    "positions (generation feeds each new token back in); an encoder-only model gives one output per "
                    "input token. Only the encoder-decoder has a second length. max_len is the learned table's number "
                    "of rows, a limit, not a sequence.",
    ),
    Question(
        id="fam-attention-blocks", topic=TOPIC, kind="numeric", parametric=True, expression=attention_blocks,
        prompt="How many attention blocks (self- and cross-attention together) does the sidebar's {arch} model "
               "have with layers={layers}?",
        answer=value("family_parts", "attention_blocks"), evidence="family_parts",
        explanation="The encoder-decoder has one self-attention per encoder layer and two attention blocks per decoder "
                    "layer (masked self-attention and cross-attention): 3·layers. A single stack has one per layer. "
                    "Counted on the module tree of the model built at your sizes.",
    ),
    Question(
        id="fam-logits", topic=TOPIC, kind="shape", parametric=True, families=ONE_STACK,
        prompt="What is the shape of the {arch} model's logits, the output layer's scores before the softmax?",
        answer=row_shape("logits"), evidence="pass_shapes",
        explanation="One score per vocabulary token at each of the M positions of each sequence: (N, M, vocab_size). "
                    "With one sequence there is no M_target: a decoder-only model's position i scores the token that "
                    "follows token i.",
    ),
    Question(
        id="fam-fewer", topic=TOPIC, kind="numeric", parametric=True, unit="count", families=ONE_STACK,
        prompt="How many fewer parameters does the sidebar's {arch} model have than an encoder-decoder with the same "
               "sizes and parts? (Exact, or rounded with K, M or B.)",
        answer=value("family_parts", "fewer_than_paper"), evidence="family_parts",
        explanation="The whole second stack goes, and with it the cross-attention blocks; the paper's model also has "
                    "a second embedding table unless the two are tied, and, when the model has biases, a bias in its "
                    "output layer. Both counts are read off models built on the meta device.",
    ),
    Question(
        id="fam-reach-decoder", topic=TOPIC, kind="predict", families=DECODER_ONLY,
        prompt="Predict, then run: in the decoder-only model you change the input token in the middle of the "
               "sequence. Which positions' logits change?",
        choices=_REACH_DECODER, answer=outcome("family_reach", _reach_decoder, _REACH_DECODER),
        evidence="family_reach",
        explanation="Every layer's self-attention is causal, so position i reads tokens 0..i only: a change at j "
                    "reaches j and every later position, never an earlier one. That is what lets one pass train all "
                    "M next-token predictions at once.",
    ),
    Question(
        id="fam-reach-encoder", topic=TOPIC, kind="predict", families=ENCODER_ONLY,
        prompt="Predict, then run: in the encoder-only model (BERT's kind) you change the input token in the middle "
               "of the sequence. Which positions' logits change?",
        choices=_REACH_ENCODER, answer=outcome("family_reach", _reach_encoder, _REACH_ENCODER),
        evidence="family_reach",
        explanation="An encoder has no causal mask: every position attends to every other (padding aside), so one "
                    "changed token reaches every output after a single layer. Such a model reads a whole text at once, "
                    "which suits classifying or filling in a masked token, not generating left to right.",
    ),
)
