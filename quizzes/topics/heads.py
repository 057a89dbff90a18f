"""The heads' own parts (Qwen3, Gemma): a head width head_dim that is not E / nhead, and qk_norm, an RMSNorm on each
head's query and key."""

import math
from functools import partial

from core.config import TransformerConfig
from quizzes.questions import Context, Question, outcome, row_shape, value, with_head_dim, with_qk_norm

TOPIC = "Head width and qk_norm"

_ask = partial(Question, topic=TOPIC, evidence="head_parts")


def _w_q_weights(ctx: Context) -> int:
    """Every head's W^Q as the trace keeps it, (nhead, E, d_k)."""
    stack = "enc" if ctx.cfg.arch != "decoder-only" else "dec"
    return math.prod(ctx.trace.shapes[f"{stack}.0.self_attn.W_Q"])


def norms_formula(c: TransformerConfig) -> str:
    """A d_k-wide gain for q and one for k in every attention block: one a layer in a single stack, three (self,
    masked self and cross) per encoder and decoder layer pair."""
    return "6*layers*d_k" if c.arch == "encoder-decoder" else "2*layers*d_k"


_RMS = (
    "1: RMSNorm divides each head's d_k-wide query by its root mean square, and its gain starts at 1.",
    "1/√d_k, the scaling the scores get.",
    "Whatever W^Q gives: the norm only rescales the scores after the softmax.",
)


def _rms(v: dict) -> int:
    return 0 if v["q_rms_spread"] < 1e-3 else 2


QUESTIONS = (
    _ask(id="hd-concat", kind="shape", parametric=True, when=with_head_dim,
         prompt="Here each of the nhead={nhead} heads is d_k={d_k} wide, though E / nhead = {E} / {nhead}. What is "
                "the shape of the heads concatenated, before W^O, for N={N} sequences of M={M} tokens?",
         answer=row_shape("concatenated_heads"),
         explanation="The heads are laid side by side: nhead · d_k wide, which is not E when head_dim is set apart "
                     "from E / nhead. W^O maps that width back to E, so the residual stream stays (N, M, E). Qwen3-"
                     "30B-A3B: 32 heads of 128 make 4096 from E = 2048."),
    _ask(id="hd-wq", kind="numeric", parametric=True, when=with_head_dim, expression="E*nhead*d_k",
         prompt="How many weights does W^Q hold, every head's together, at E={E}, nhead={nhead} and d_k={d_k}?",
         answer=_w_q_weights,
         explanation="W^Q maps E to nhead · d_k: E · nhead · d_k weights, not E², once d_k is not E / nhead. W^O holds "
                     "as many the other way; W^K and W^V, E · nhead_kv · d_k each."),
    _ask(id="qk-params", kind="numeric", parametric=True, when=with_qk_norm, expression=norms_formula,
         prompt="qk_norm puts an RMSNorm on every head's query and key, over its d_k={d_k} numbers, in every "
                "attention block. How many parameters do these norms add to the whole model (layers={layers})?",
         answer=value("head_parts", "qk_norm_params"),
         explanation="One d_k-wide gain for the queries and one for the keys, shared by the heads of a block: 2 · "
                     "d_k a block, whatever nhead is. Counted on the model. Tiny, but it keeps every head's q and k "
                     "at a fixed size, so no head's scores can blow up as training goes (Qwen3, Gemma 3)."),
    _ask(id="qk-rms", kind="predict", when=with_qk_norm, choices=_RMS, answer=outcome("head_parts", _rms, _RMS),
         prompt="Predict, then run: with qk_norm, what is the root mean square of each head's query vector, over its "
                "d_k numbers, in a freshly built block?",
         explanation="RMSNorm divides a vector by its root mean square and multiplies by a gain, which starts at 1: "
                     "every head's query and key come out with a root mean square of 1 (up to the norm's small eps), "
                     "before RoPE turns them, which keeps their length. Without qk_norm the chart's spread is far from "
                     "0. The scores are still divided by √d_k."),
)
