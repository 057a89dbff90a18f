"""Your own text: its tokens, its vocabulary, and what the model makes of it.

Every answer is computed from the learner's text (``Context.text``, the "Your text" box), or, without one,
from EXAMPLE_TEXT, at the sidebar's sizes; the two questions on a row's shape ask about the quiz's own pass,
which without a text has the sidebar's sizes, and say so. The prompts never quote the learner's text: it is
theirs, and a prompt is rendered as Markdown.

The questions that read a row's numbers need a real pass over the text. Where one is over the memory
budget (GPT-2's sizes and up: a tiny text, but E, layers and d_ff too big), they read the text's first line
alone at capped sizes (CAPPED), and their prompt says so: every question shown has an answer at every config.
"""

from __future__ import annotations

from functools import lru_cache, partial

import torch

from core import TransformerConfig, trace
from core.config import ATTENTIONS, MLA_FIELDS
from core.memory import estimate
from core.tokens import MAX_TOKENS, TokenBatch, TokenizedText, split, text_config, tokenize
from core.trace import DEFAULT_BUDGET_BYTES, Trace
from core.train import ReversalSettings, TrainedModel, reversal_sequence, train_reversal
from core.values import value_slice
from quizzes.experiments.base import largest_divisor_at_most
from quizzes.questions import Context, Question

TOPIC = "Your text"
EXAMPLE_TEXT = "the cat sat on the mat"
EXAMPLE = tokenize(EXAMPLE_TEXT, "word")  # what the questions read while the learner's box is empty
SAME, DIFFERENT = "the same numbers", "different numbers"
# A pass over the memory budget runs the first line alone at these sizes at most, so every question has an answer.
CAPPED = {"E": 64, "nhead": 8, "d_ff": 256, "layers": 2}


def learner_text(ctx: Context) -> TokenizedText:
    """The text the questions are about: the learner's, or the example at word level."""
    return ctx.text if ctx.text is not None else EXAMPLE


def _first_line(ctx: Context) -> str:
    """The text's first line as typed, whole even past the MAX_TOKENS the model reads."""
    text = learner_text(ctx)
    return text.first_line or "".join(text.source[0])


def capped(cfg: TransformerConfig) -> TransformerConfig:
    """``cfg`` with E, nhead, d_ff and layers at most CAPPED; nhead (and nhead_kv) the largest that still divide
    E (and nhead), so d_k stays even for RoPE."""
    E = min(cfg.E, CAPPED["E"])
    nhead = largest_divisor_at_most(E, min(cfg.nhead, CAPPED["nhead"]))
    layers = min(cfg.layers, CAPPED["layers"])
    # The newer parts' own widths and counts are capped alike, or DeepSeek-V3's 256 experts and latents stay over.
    parts = {} if not cfg.moe else {
        "n_experts": min(cfg.n_experts, CAPPED["nhead"]), "top_k": min(cfg.top_k, CAPPED["nhead"]),
        "d_ff_expert": min(cfg.d_ff_expert, CAPPED["d_ff"]),
        "first_dense_layers": min(cfg.first_dense_layers, layers - 1)}
    if cfg.attention == "mla":
        parts |= {name: min(getattr(cfg, name), CAPPED["E"]) for name in MLA_FIELDS}
        parts["rope_head_dim"] -= parts["rope_head_dim"] % 2
    elif cfg.head_dim != cfg.E // cfg.nhead:
        parts["head_dim"] = min(cfg.head_dim, CAPPED["E"] // 2 * 2)
    return cfg.replace(E=E, nhead=nhead, nhead_kv=largest_divisor_at_most(nhead, cfg.nhead_kv),
                       d_ff=min(cfg.d_ff, CAPPED["d_ff"]), layers=layers, **parts)


def over_budget(cfg: TransformerConfig, text: TokenizedText) -> bool:
    """Whether a real pass over the text at ``cfg``'s sizes is over the memory budget (it would run shape-only)."""
    return estimate(text_config(cfg, text)).over(DEFAULT_BUDGET_BYTES)


@lru_cache(maxsize=8)
def _text_trace(cfg: TransformerConfig, text: TokenizedText) -> Trace:
    if not over_budget(cfg, text):
        return trace(text_config(cfg, text), text=text)
    # Only the first line is read, and sequences do not mix: it alone, with the text's vocabulary.
    batch = text.batch()
    first = TokenBatch(source=batch.source[:1], target=batch.target[:1], labels=batch.labels)
    return trace(text_config(capped(cfg), first), text=first, shape_only=False)


def text_trace(ctx: Context, text: TokenizedText | None = None) -> Trace:
    """The pass over the text (``text``, or the quiz's), at the sidebar's sizes but for N, M (M_target) and
    vocab_size, which the text sets; over the memory budget, its first line's at capped sizes."""
    return _text_trace(ctx.cfg, text or learner_text(ctx))


def capped_aside(ctx: Context, text: TokenizedText | None = None) -> str:
    """What the prompt adds when the pass it reads (over ``text``, or the quiz's) is the capped one."""
    if not over_budget(ctx.cfg, text or learner_text(ctx)):
        return ""
    sizes = ", ".join(f"{k} ≤ {v}" for k, v in CAPPED.items())
    return (f"(A real pass of this model over the text is over the memory budget, so the quiz runs the first "
            f"line alone, at {sizes}.)")


def count(level: str):
    """The tokens of the text's first line, all of them, as ``split`` makes them at ``level``."""
    return lambda ctx: len(split(_first_line(ctx), level))


def vocab_size(level: str):
    """The first line's distinct tokens at ``level``, all of them, plus one for the start token."""
    return lambda ctx: len(set(split(_first_line(ctx), level))) + 1


def row_shape_of(key: str):
    """The live shape of a row of the quiz's pass: over the learner's text when the quiz has one, as the
    quiz's config then has the sizes the text sets (core.tokens.text_config); else at the sidebar's sizes."""
    return lambda ctx: tuple(ctx.trace.row(key).shape)


def last_row_formula(cfg: TransformerConfig) -> str:
    return "(N, M_target, vocab_size)" if cfg.arch == "encoder-decoder" else "(N, M, vocab_size)"


def first_repeat(text: TokenizedText) -> tuple[int, int] | None:
    """Reading the first line from the left, the first token met before: (where it was first met, where it is
    met again). In “the cat sat on the mat” that is the space, (1, 3). None when no token repeats."""
    seen: dict[str, int] = {}
    for j, tok in enumerate(text.source[0]):
        if tok in seen:
            return seen[tok], j
        seen[tok] = j
    return None


def repeated_text(ctx: Context) -> TokenizedText:
    """The text the repeated-token questions read: the learner's when its first line repeats a token, else the
    example, whose first line does."""
    text = learner_text(ctx)
    return text if first_repeat(text) is not None else EXAMPLE


def repeat_aside(ctx: Context) -> str:
    """What the prompt adds when the learner's first line repeats no token, and the question reads the example."""
    if repeated_text(ctx) is EXAMPLE and ctx.text is not None:
        return (f"(Your first line repeats no token, so this asks about the example, “{EXAMPLE_TEXT}”, at word "
                "level.)")
    return ""


def repeat_and_capped_aside(ctx: Context) -> str:
    return " ".join(a for a in (repeat_aside(ctx), capped_aside(ctx, repeated_text(ctx))) if a)


def same_rows(*keys: str):
    """Whether a row (the first of ``keys`` the family has) holds the same numbers at the two positions of the
    first repeated token (first_repeat), head 0's where the row is per head."""
    def rule(ctx: Context) -> str:
        text = repeated_text(ctx)
        t = text_trace(ctx, text)
        key = next(k for k in keys if any(r.key == k for r in t.rows))
        values, _, _ = value_slice(t, key, item=0, head=0, rows=t.config.M, cols=t.config.E)
        i, j = first_repeat(text)
        return SAME if values[i] == values[j] else DIFFERENT
    return rule


def _last_row_weights(ctx: Context) -> torch.Tensor:
    """Layer 0's first self-attention, head 0: the weights of the first line's last query over its keys."""
    t = text_trace(ctx)
    stack = "dec" if t.config.arch == "decoder-only" else "enc"
    weights = t.tensors[f"{stack}.0.self_attn.weights"][0, 0]  # (M, M)
    last = len(learner_text(ctx).source[0]) - 1
    return weights[last, :last + 1]  # (last + 1,)


def attends_most(ctx: Context) -> int:
    """The key position the last query of the first line takes most from, in layer 0's first self-attention
    (head 0); the first of them when several share the largest weight (tied_most gives the others)."""
    return int(_last_row_weights(ctx).argmax())


def tied_most(ctx: Context) -> tuple[int, ...]:
    """Every key position whose weight equals the largest, to float32 rounding: with no positions, two copies of
    one token get exactly the same weight, and either is the answer."""
    row = _last_row_weights(ctx)
    top = row.max()
    close = (top - row).abs() <= 4 * torch.finfo(row.dtype).eps * top  # (last + 1,)
    return tuple(int(i) for i in torch.nonzero(close).flatten().tolist())


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


# The text's questions read rows every attention has (latent attention's too, its sizes capped alike).
_ask = partial(Question, topic=TOPIC, attention=ATTENTIONS)


QUESTIONS = (
    _ask(
        id="yt-count-word", kind="numeric",
        prompt="How many tokens does the first line of your text make at word level, `re.split(r\"\\b\", text)` "
               f"with the empty pieces dropped? The whole line, even past the {MAX_TOKENS} tokens the model reads of "
               "it. (No "
               "text typed: “the cat sat on the mat”.)",
        answer=count("word"), evidence="pass_shapes",
        explanation="Word level splits at every word boundary, so the spaces and punctuation between words are "
                    "tokens too: “the cat sat on the mat” is 6 words and 5 spaces, 11 tokens.",
    ),
    _ask(
        id="yt-count-char", kind="numeric",
        prompt="How many tokens does the first line of your text make at character level, `list(text)`? The whole "
               f"line, even past the {MAX_TOKENS} tokens the model reads of it.",
        answer=count("char"), evidence="pass_shapes",
        explanation="One token per character, spaces included: the line's length. The model reads at most "
                    f"{MAX_TOKENS} tokens of a line (the box says when it cuts one), but the count is the text's.",
    ),
    _ask(
        id="yt-vocab-word", kind="numeric",
        prompt="At word level, what is vocab_size for the first line of your text (the whole line)?",
        answer=vocab_size("word"), evidence="pass_shapes",
        explanation="The distinct tokens, plus one for the start token (id 0): “the cat sat on the mat” has "
                    "6 distinct tokens (the, cat, sat, on, mat and the space), so vocab_size = 7.",
    ),
    _ask(
        id="yt-vocab-char", kind="numeric",
        prompt="At character level, what is vocab_size for the first line of your text (the whole line)?",
        answer=vocab_size("char"), evidence="pass_shapes",
        explanation="The distinct characters (the space counts once), plus one for the start token.",
    ),
    _ask(
        id="yt-row1", kind="shape", parametric=True, expression="(N, M)",
        prompt="Your text runs through the model (one sequence per line, at the level chosen in the box; without "
               "one, the sidebar's sizes). What is the shape of row 1, the input tokens?",
        answer=row_shape_of("input_tokens"), evidence="pass_shapes",
        explanation="(N, M): N is the number of lines, M the longest line's token count; shorter lines are "
                    "padded and the key padding mask hides the padding.",
    ),
    _ask(
        id="yt-row14", kind="shape", parametric=True, expression=last_row_formula,
        prompt="With your text as the batch (without one, the sidebar's sizes, as for the input tokens), what is the "
               "shape of the output probabilities, the pass's last row?",
        answer=row_shape_of("output_probabilities"), evidence="pass_shapes",
        explanation="The last row ends in vocab_size, which your text sets: one score per vocabulary entry at each "
                    "position (the encoder-decoder's over M_target positions, a single stack's over M).",
    ),
    _ask(
        id="yt-predict-row2", kind="predict", choices=(SAME, DIFFERENT),
        prompt="Predict, then run: read your text's first line from the left and stop at the first token you have "
               "met before (in “the cat sat on the mat”, the space at position 3, met at 1). Does the token "
               "embedding (row 2) hold the same numbers at its two positions?",
        answer=same_rows("token_embedding"), evidence="pass_shapes", aside=repeat_and_capped_aside,
        explanation="Row 2 is a lookup: the same id gives the same row of the embedding matrix, wherever it "
                    "stands. Positions enter only after it.",
    ),
    _ask(
        id="yt-predict-row5", kind="predict", choices=(SAME, DIFFERENT),
        prompt="Predict, then run: the same repeated token, the first you meet again reading from the left. Does head "
               "0's Q in layer 0 (the table's row of Q of one head) hold the same numbers at its two positions?",
        answer=same_rows("qkv_one_head", "q_one_head"), evidence="pass_shapes", aside=repeat_and_capped_aside,
        explanation="Q = X · W^Q + b, and X is the token's embedding plus its position's vector (or RoPE turns Q "
                    "by its position): the two copies differ unless the model has no positional information "
                    "(positional = none).",
    ),
    _ask(
        id="yt-attends-most", kind="numeric",
        prompt="In layer 0's first self-attention, head 0, which key position does the last token of your "
               "text's first line take most from? (Positions count from 0.)",
        answer=attends_most, evidence="pass_shapes", aside=capped_aside, ties=tied_most,
        explanation="Read the last row of the map: its largest weight. Untrained weights make the choice "
                    "arbitrary; after training on a task it follows the task (on the reversal task, the "
                    "mirror position). Where two positions share the largest weight (with no positions, two copies "
                    "of one token get exactly the same), either is right.",
    ),
    _ask(
        id="yt-trained-attends", kind="numeric",
        prompt="A model trained on the reversal task (16 symbols; it reads [BOS, x, reverse(x)], M = 16) gets as x "
               "the first 8 token ids of your text's first line, each mod 16. In its layer 0, averaged over the "
               "heads, which symbol does the query at position 12 take most from?",
        answer=trained_attends_to, evidence="pass_shapes",
        explanation="Trained, the mirror half looks back at the token it copies next: the lower half of the map "
                    "is an anti-diagonal. The query at position 12 predicts position 13, a copy of the symbol at "
                    "position M − 12 = 4 (position 0 is BOS), which is x[3]: its largest weight sits there.",
    ),
)
