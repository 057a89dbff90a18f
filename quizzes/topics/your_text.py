"""Your own text: its tokens, its vocabulary, and what the model makes of it.

Every answer is computed from the learner's text (``Context.text``, the "Your text" box), or, without one,
from EXAMPLE_TEXT, at the sidebar's sizes. The prompts never quote the text: it is the learner's, and a
prompt is rendered as Markdown.
"""

from __future__ import annotations

from functools import lru_cache

from core import TransformerConfig, trace
from core.tokens import TokenizedText, split, text_config, tokenize
from core.trace import Trace
from core.train import ReversalSettings, TrainedModel, reversal_sequence, train_reversal
from core.values import value_slice
from quizzes.questions import Context, Question

TOPIC = "Your text"
EXAMPLE_TEXT = "the cat sat on the mat"
EXAMPLE = tokenize(EXAMPLE_TEXT, "word")  # what the questions read while the learner's box is empty
SAME, DIFFERENT = "the same numbers", "different numbers"


def learner_text(ctx: Context) -> TokenizedText:
    """The text the questions are about: the learner's, or the example at word level."""
    return ctx.text if ctx.text is not None else EXAMPLE


def _first_line(ctx: Context) -> str:
    return "".join(learner_text(ctx).source[0])


@lru_cache(maxsize=8)
def _text_trace(cfg: TransformerConfig, text: TokenizedText) -> Trace:
    return trace(text_config(cfg, text), text=text)


def text_trace(ctx: Context) -> Trace:
    """The pass over the text, at the sidebar's sizes but for N, M (M_target) and vocab_size, which the text sets."""
    return _text_trace(ctx.cfg, learner_text(ctx))


def count(level: str):
    return lambda ctx: len(split(_first_line(ctx), level))


def vocab_size(level: str):
    return lambda ctx: tokenize(_first_line(ctx), level).vocab_size


def row_shape_of(key: str):
    """The live shape of a row of the quiz's pass: over the learner's text when the quiz has one, as the
    quiz's config then has the sizes the text sets (core.tokens.text_config)."""
    return lambda ctx: tuple(ctx.trace.row(key).shape)


def last_row_formula(cfg: TransformerConfig) -> str:
    return "(N, M_target, vocab_size)" if cfg.arch == "encoder-decoder" else "(N, M, vocab_size)"


def _repeated(ctx: Context) -> tuple[int, int]:
    """The first two positions of the first line that hold the same token (0 and the last position if none
    repeats: then the question's answer is still read off the pass)."""
    seen: dict[str, int] = {}
    tokens = learner_text(ctx).source[0]
    for j, tok in enumerate(tokens):
        if tok in seen:
            return seen[tok], j
        seen[tok] = j
    return 0, len(tokens) - 1


def same_rows(*keys: str):
    """Whether a row (the first of ``keys`` the family has) holds the same numbers at the two positions of a
    repeated token, head 0's where the row is per head."""
    def rule(ctx: Context) -> str:
        t = text_trace(ctx)
        key = next(k for k in keys if any(r.key == k for r in t.rows))
        values, _, _ = value_slice(t, key, item=0, head=0, rows=t.config.M, cols=t.config.E)
        i, j = _repeated(ctx)
        return SAME if values[i] == values[j] else DIFFERENT
    return rule


def attends_most(ctx: Context) -> int:
    """The key position the last query of the first line takes most from, in layer 0's first self-attention
    (head 0)."""
    t = text_trace(ctx)
    stack = "dec" if t.config.arch == "decoder-only" else "enc"
    weights = t.tensors[f"{stack}.0.self_attn.weights"][0, 0]  # (M, M)
    last = len(learner_text(ctx).source[0]) - 1
    return int(weights[last, :last + 1].argmax())


# The reversal model the trained-map question reads: small enough to train in seconds, once per process, and
# seeded, so its map is the same every time. It learns the anti-diagonal (tests/quizzes/test_your_text.py).
REVERSAL = ReversalSettings(M=16, vocab_size=16, E=32, nhead=4, layers=2, d_ff=64, steps=200, eval_sequences=64)
QUERY = 12  # a query in the mirror half: it copies the token at M - QUERY


@lru_cache(maxsize=1)
def reversal_model() -> TrainedModel:
    trained = train_reversal(REVERSAL, keep_model=True).trained
    assert trained is not None  # keep_model=True always keeps it
    return trained


def text_as_x(ctx: Context) -> list[int]:
    """The learner's text as the reversal task's x: the first line's first M/2 ids (repeated if the line is
    shorter), each taken mod vocab_size."""
    tok = learner_text(ctx)
    ids = tok.ids(tok.source[0])
    half = REVERSAL.M // 2
    return [ids[i % len(ids)] % REVERSAL.vocab_size for i in range(half)]


def trained_attends_to(ctx: Context) -> int:
    """The symbol the query at QUERY takes most from, in the trained model's layer 0, averaged over heads."""
    trained = reversal_model()
    batch = reversal_sequence(REVERSAL, text_as_x(ctx))
    t = trained.trace(batch)
    weights = t.tensors["dec.0.self_attn.weights"][0].mean(0)  # (nhead, M, M) -> (M, M)
    return batch.source[0][int(weights[QUERY].argmax())]


QUESTIONS = (
    Question(
        id="yt-count-word", topic=TOPIC, kind="numeric",
        prompt="How many tokens does the first line of your text make at word level, `re.split(r\"\\b\", text)` "
               "with the empty pieces dropped? (No text typed: “the cat sat on the mat”.)",
        answer=count("word"), evidence="pass_shapes",
        explanation="Word level splits at every word boundary, so the spaces and punctuation between words are "
                    "tokens too: “the cat sat on the mat” is 6 words and 5 spaces, 11 tokens.",
    ),
    Question(
        id="yt-count-char", topic=TOPIC, kind="numeric",
        prompt="How many tokens does the first line of your text make at character level, `list(text)`?",
        answer=count("char"), evidence="pass_shapes",
        explanation="One token per character, spaces included: the line's length.",
    ),
    Question(
        id="yt-vocab-word", topic=TOPIC, kind="numeric",
        prompt="At word level, what is vocab_size for the first line of your text?",
        answer=vocab_size("word"), evidence="pass_shapes",
        explanation="The distinct tokens, plus one for the start token (id 0): “the cat sat on the mat” has "
                    "6 distinct tokens (the, cat, sat, on, mat and the space), so vocab_size = 7.",
    ),
    Question(
        id="yt-vocab-char", topic=TOPIC, kind="numeric",
        prompt="At character level, what is vocab_size for the first line of your text?",
        answer=vocab_size("char"), evidence="pass_shapes",
        explanation="The distinct characters (the space counts once), plus one for the start token.",
    ),
    Question(
        id="yt-row1", topic=TOPIC, kind="shape", parametric=True, expression="(N, M)",
        prompt="Your text runs through the model (one sequence per line, at the level chosen in the box; without "
               "one, the sidebar's sizes). What is the shape of row 1, the input tokens?",
        answer=row_shape_of("input_tokens"), evidence="pass_shapes",
        explanation="(N, M): N is the number of lines, M the longest line's token count; shorter lines are "
                    "padded and the key padding mask hides the padding.",
    ),
    Question(
        id="yt-row14", topic=TOPIC, kind="shape", parametric=True, expression=last_row_formula,
        prompt="With your text as the batch, what is the shape of the output probabilities, the pass's last row "
               "(row 14 of the encoder-decoder)?",
        answer=row_shape_of("output_probabilities"), evidence="pass_shapes",
        explanation="Row 14 ends in vocab_size, which your text sets: one score per vocabulary entry at each "
                    "position (the encoder-decoder's over M_target positions, a single stack's over M).",
    ),
    Question(
        id="yt-predict-row2", topic=TOPIC, kind="predict", choices=(SAME, DIFFERENT),
        prompt="Predict, then run: take the first token that occurs twice in your text's first line. Does row 2, "
               "the token embedding, hold the same numbers at its two positions?",
        answer=same_rows("token_embedding"), evidence="pass_shapes",
        explanation="Row 2 is a lookup: the same id gives the same row of the embedding matrix, wherever it "
                    "stands. Positions enter only after it.",
    ),
    Question(
        id="yt-predict-row5", topic=TOPIC, kind="predict", choices=(SAME, DIFFERENT),
        prompt="Predict, then run: the same repeated token. Does row 5, Q of one head, hold the same numbers "
               "at its two positions?",
        answer=same_rows("qkv_one_head", "q_one_head"), evidence="pass_shapes",
        explanation="Q = X · W^Q + b, and X is the token's embedding plus its position's vector (or RoPE turns Q "
                    "by its position): the two copies differ unless the model has no positional information "
                    "(positional = none).",
    ),
    Question(
        id="yt-attends-most", topic=TOPIC, kind="numeric",
        prompt="In layer 0's first self-attention, head 0, which key position does the last token of your "
               "text's first line take most from? (Positions count from 0.)",
        answer=attends_most, evidence="pass_shapes",
        explanation="Read the last row of the map: its largest weight. Untrained weights make the choice "
                    "arbitrary; after training on a task it follows the task (on the reversal task, the "
                    "mirror position).",
    ),
    Question(
        id="yt-trained-attends", topic=TOPIC, kind="numeric",
        prompt="A model trained on the reversal task (16 symbols; it reads [BOS, x, reverse(x)], M = 16) gets as x "
               "the first 8 token ids of your text's first line, each mod 16. In its layer 0, averaged over the "
               "heads, which symbol does the query at position 12 take most from?",
        answer=trained_attends_to, evidence="pass_shapes",
        explanation="Trained, the mirror half looks back at the token it copies next: the lower half of the map "
                    "is an anti-diagonal. The query at position 12 predicts position 13, a copy of the symbol at "
                    "position M − 12 = 4 (position 0 is BOS), which is x[3]: its largest weight sits there.",
    ),
)
