"""The KV cache of a decoder-only model: what it holds, how big it grows for a context, and that it changes
no logit."""

from core.config import LLAMA2_70B, TransformerConfig
from quizzes.questions import DECODER_ONLY, Question, full_cache, outcome, row_shape, value

TOPIC = "KV cache"

_AGREE = (
    "They agree, to float rounding: the cache only spares recomputing keys and values that cannot change.",
    "They differ a little: the cache is an approximation that trades accuracy for speed.",
    "They differ: a cached token can no longer see the prompt.",
)


def bytes_formula(c: TransformerConfig) -> str:
    """K and V, every layer, every sequence, every K/V head and position: two bytes a number in fp16."""
    return "2*layers*N*nhead_kv*M*d_k*2"


def saved_formula(c: TransformerConfig) -> str:
    return "2*layers*N*(nhead - nhead_kv)*M*d_k*2"


QUESTIONS = (
    Question(
        id="kv-shape", topic=TOPIC, kind="shape", parametric=True, families=DECODER_ONLY, when=full_cache,
        prompt="After the decoder-only model has read its prompt of M={M} tokens, what is the shape of its whole KV "
               "cache, every layer's K and V stacked as (layers, 2, ...)?",
        answer=row_shape("kv_cache"), evidence="pass_shapes",
        explanation="Each layer keeps K and V for every position read so far: (N, nhead_kv, M, d_k) each. Stacked "
                    "over the layers and the pair: (layers, 2, N, nhead_kv, M, d_k). Every generated token adds one "
                    "position, and computes only its own keys and values.",
    ),
    Question(
        id="kv-bytes", topic=TOPIC, kind="numeric", parametric=True, unit="count", families=DECODER_ONLY,
        when=full_cache,
        expression=bytes_formula,
        prompt="In fp16 (2 bytes a number), how many bytes does the KV cache hold for a context of M={M} tokens, "
               "N={N} sequences, layers={layers}, nhead_kv={nhead_kv} and d_k={d_k}?",
        answer=value("kv_cache", "cache_bytes_fp16"), evidence="kv_cache",
        explanation="2 (K and V) x layers x N x nhead_kv x M x d_k numbers, two bytes each. It grows with the "
                    "context M, not with M² as the attention weights do, but for every layer and sequence at once. "
                    "Read off the caches of attention blocks run on the meta device at your sizes.",
    ),
    Question(
        id="kv-saved", topic=TOPIC, kind="numeric", parametric=True, unit="count", families=DECODER_ONLY,
        when=full_cache,
        expression=saved_formula,
        prompt="And how many fp16 bytes does nhead_kv={nhead_kv} save on that cache, against multi-head attention "
               "(nhead_kv = nhead = {nhead})?",
        answer=value("kv_cache", "saved_bytes_fp16"), evidence="kv_cache",
        explanation="The cache holds nhead_kv heads instead of nhead, so it is nhead / nhead_kv times smaller: the "
                    "saving is 2·layers·N·(nhead − nhead_kv)·M·d_k numbers of two bytes. At nhead_kv = nhead, "
                    "nothing; at MQA, all but one head's worth.",
    ),
    Question(
        id="kv-llama", topic=TOPIC, kind="numeric", tolerance=0.01, sizes=LLAMA2_70B, families=DECODER_ONLY,
        prompt="Llama-2-70B has 80 layers and 8 K/V heads of d_k=128. How many MiB does its KV cache hold for one "
               "sequence of 4,096 tokens in fp16? (within 1%)",
        answer=value("kv_cache", "llama_mib"), evidence="kv_cache",
        explanation="2 x 80 x 1 x 8 x 4096 x 128 numbers x 2 bytes = 1,342,177,280 bytes, 1,280 MiB: 1.25 GiB per "
                    "sequence. With 64 K/V heads (plain multi-head attention) it would be 8 times that, 10 GiB, which "
                    "is why the model shares its K/V heads.",
    ),
    Question(
        id="kv-agree", topic=TOPIC, kind="predict", families=DECODER_ONLY,
        prompt="Predict, then run: generate a few tokens with the KV cache, and compute each step's logits again "
               "with a full pass over everything so far. How do the two compare?",
        choices=_AGREE, answer=outcome("kv_cache", lambda v: 0 if v["agree"] else 1, _AGREE), evidence="kv_cache",
        explanation="Under the causal mask an earlier position's keys and values never depend on later tokens, so "
                    "computing them once and keeping them gives the same numbers as recomputing them: the logits "
                    "agree to float rounding (the largest difference is in the table). The cache costs memory, not "
                    "accuracy.",
    ),
)
