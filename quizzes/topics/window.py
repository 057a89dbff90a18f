"""A sliding window (Mistral, Gemma): a query sees only the last ``window`` positions, so a layer's cache stops
growing at the window, and a token's information still travels further back, one window a layer."""

import math
from functools import partial

from core.config import MISTRAL_7B
from core.memory import FP16_BYTES, kv_cache_bytes
from quizzes.experiments.parts import reach
from quizzes.questions import DECODER_ONLY, Context, Question, value, with_window

TOPIC = "Sliding window"

_ask = partial(Question, topic=TOPIC, families=DECODER_ONLY, when=with_window, evidence="window_reach")

MISTRAL_CONTEXT = 16_384


def _kept(ctx: Context) -> int:
    """The windowed layers' stacked cache, (windowed_layers, 2, N, nhead_kv, M_window, d_k): its positions."""
    return ctx.trace.shapes["kv_cache"][4]


def _cache_numbers(ctx: Context) -> int:
    shapes = ctx.trace.shapes
    return math.prod(shapes["kv_cache"]) + (math.prod(shapes["kv_cache_global"]) if "kv_cache_global" in shapes else 0)


def _windowed_reach(ctx: Context) -> int:
    """How far back the last position's information comes from through the windowed layers alone, on a sequence
    long enough that the start does not stop it: composed from the model's own band masks."""
    layers = sum(ctx.cfg.windowed(i) for i in range(ctx.cfg.layers))
    long = layers * (ctx.cfg.window - 1) + 2
    return long - 1 - reach(long, [True] * layers, ctx.cfg.window)


def _mistral_mib(ctx: Context) -> float:
    return kv_cache_bytes(MISTRAL_7B.replace(N=1, M=MISTRAL_CONTEXT), bytes_per_number=FP16_BYTES) / 2**20


QUESTIONS = (
    _ask(id="win-kept", kind="numeric", parametric=True,
         prompt="With window={window}, after a prompt of M={M} tokens, how many positions does each windowed "
                "layer's KV cache keep?",
         answer=_kept,
         explanation="A query sees the last window positions, itself included, so the next token needs no older key: "
                     "the layer keeps min(M, window) positions as a rolling buffer. However long the text grows, its "
                     "cache stops at window."),
    _ask(id="win-cache-numbers", kind="numeric", parametric=True, unit="count",
         prompt="How many numbers does the whole KV cache hold after the prompt of M={M} tokens (N={N}, layers="
                "{layers}, nhead_kv={nhead_kv}, d_k={d_k}, window={window}, a full layer every global_every="
                "{global_every} layers, 0 for none)?",
         answer=_cache_numbers,
         explanation="2 · N · nhead_kv · d_k numbers a kept position: min(M, window) positions in each windowed "
                     "layer, all M in each full one. Read off the trace's caches: (windowed_layers, 2, N, nhead_kv, "
                     "M_window, d_k) and, with full layers, (global_layers, 2, N, nhead_kv, M, d_k)."),
    _ask(id="win-open-pairs", kind="numeric", parametric=True,
         prompt="In one windowed layer's (M, M) attention map at M={M} and window={window}, how many (query, key) "
                "pairs are left open, neither later than the query nor window or more behind?",
         answer=value("window_reach", "open_pairs"),
         explanation="Query i sees min(i + 1, window) keys: a band along the diagonal. The causal mask alone leaves "
                     "M(M + 1)/2; the band grows only linearly with M once M passes the window, which is what makes "
                     "long contexts cheap. Counted on the model's own band mask."),
    _ask(id="win-earliest", kind="numeric", parametric=True,
         prompt="Through all layers={layers} layers of this model (window={window}, global_every={global_every}), "
                "what is the earliest position whose token can affect the output at the last position, M − 1 = "
                "{M} − 1?",
         answer=value("window_reach", "earliest"),
         explanation="Each windowed layer lets a position gather from window − 1 positions back, and what those held "
                     "from the layer before: after L windowed layers the last position reaches L · (window − 1) back, "
                     "or the start. One full layer reaches the start at once. Composed from the model's masks, layer "
                     "by layer."),
    _ask(id="win-reach", kind="numeric", parametric=True, expression="windowed_layers*(window - 1)",
         prompt="On a long text, how many positions back can information travel to a token through this model's "
                "windowed layers alone (windowed_layers of them, window={window})?",
         answer=_windowed_reach,
         explanation="One windowed layer sees window − 1 positions back (the window counts the query itself, as "
                     "Hugging Face's Mistral does); stacked, L · (window − 1). Mistral's paper writes L · W for a "
                     "window of W + 1 positions, i − W to i: 32 layers of 4096 reach about 131K tokens back. The "
                     "answer is composed from the model's own band masks on a sequence long enough."),
    _ask(id="win-mistral", kind="numeric", tolerance=0.01, sizes=MISTRAL_7B,
         prompt=f"Mistral-7B has 32 layers, 8 K/V heads of d_k=128 and a window of 4096 in every layer. How many MiB "
                f"does its KV cache hold for one sequence of {MISTRAL_CONTEXT:,} tokens in fp16? (within 1%)",
         answer=_mistral_mib,
         explanation="Each layer keeps 4096 positions, not 16,384: 2 · 32 · 8 · 4096 · 128 numbers, 2 bytes each, "
                     "512 MiB. Without the window it would be 2 GiB, and it would keep growing with the text."),
)
