"""Grouped-query and multi-query attention: fewer K/V heads than query heads, each shared by a group; what
that saves in weights, and the seed note's count of Llama-2-70B's attention put right."""

from core.config import LLAMA2_70B, TransformerConfig
from quizzes.questions import ONE_STACK, Question, even_heads, millions, outcome, row_shape, value

TOPIC = "Grouped-query attention"

_MQA = (
    "Every query head reads the one K/V head: the keys and values are computed once and shared by all nhead heads.",
    "Each query head still has keys and values of its own; only W^O is shared.",
    "Only query head 0 reads K/V head 0; the others read nothing.",
)


def attention_formula(c: TransformerConfig) -> str:
    """W^Q and W^O (E x E), W^K and W^V (E x nhead_kv·d_k), with a bias each when the model has biases."""
    weights = "2*E^2 + 2*E*nhead_kv*d_k"
    return weights + (" + 2*E + 2*nhead_kv*d_k" if c.bias else "")


def saved_formula(c: TransformerConfig) -> str:
    """What the narrower W^K and W^V give up against multi-head attention's."""
    return "2*(nhead - nhead_kv)*d_k*E" + (" + 2*(nhead - nhead_kv)*d_k" if c.bias else "")


def _mqa_readers(v: dict) -> int:
    """All query heads moved with one K/V head; or only head 0 (with more than one head); or, at one head, that one."""
    if v["mqa_group"] == v["nhead"]:
        return 0
    return 2 if v["mqa_group"] == 1 else 1


QUESTIONS = (
    Question(
        id="gqa-k-shape", topic=TOPIC, kind="shape", parametric=True, families=ONE_STACK,
        prompt="With nhead={nhead} query heads and nhead_kv={nhead_kv} K/V heads, what is the shape of the first "
               "layer's K, every K/V head stacked?",
        answer=row_shape("k_stacked"), evidence="pass_shapes",
        explanation="W^K makes nhead_kv heads of d_k, not nhead: K is (N, nhead_kv, M, d_k), and so is V. Q keeps "
                    "(N, nhead, M, d_k). The symbols matter: where nhead_kv = nhead (plain multi-head attention) "
                    "the numbers agree, but K's head axis is nhead_kv.",
    ),
    Question(
        id="gqa-group", topic=TOPIC, kind="numeric", parametric=True, expression="nhead/nhead_kv",
        prompt="With nhead={nhead} and nhead_kv={nhead_kv}, how many query heads read K/V head 0?",
        answer=value("kv_sharing", "group"), evidence="kv_sharing",
        explanation="The heads are split into nhead_kv equal groups; query head h reads K/V head h // (nhead / "
                    "nhead_kv), as Hugging Face's repeat_kv lays them out. The run changes K/V head 0's W^K and "
                    "counts the query heads whose attention weights move. nhead_kv = nhead is plain multi-head "
                    "attention (a group of 1), nhead_kv = 1 multi-query attention (one group of all).",
    ),
    Question(
        id="gqa-params", topic=TOPIC, kind="numeric", parametric=True, unit="count", expression=attention_formula,
        when=even_heads,
        prompt="How many parameters does one attention block of the sidebar's model have (E={E}, nhead={nhead}, "
               "nhead_kv={nhead_kv}, W^Q, W^K, W^V and W^O with their biases if it has any)?",
        answer=value("part_counts", "attention_block"), evidence="part_counts",
        explanation="W^Q and W^O stay E x E. W^K and W^V map E to nhead_kv·d_k only: 2E² + 2E·nhead_kv·d_k "
                    "weights, plus 2E + 2·nhead_kv·d_k biases when the model has them (Llama has none).",
    ),
    Question(
        id="gqa-saved", topic=TOPIC, kind="numeric", parametric=True, unit="count", expression=saved_formula,
        when=even_heads,
        prompt="How many parameters does one attention block save with nhead_kv={nhead_kv}, against multi-head "
               "attention (nhead_kv = nhead = {nhead}) at the same E={E}?",
        answer=value("part_counts", "saved_by_shared_kv"), evidence="part_counts",
        explanation="Only W^K and W^V shrink, each by (nhead − nhead_kv)·d_k columns of E weights (and as many "
                    "biases). With nhead_kv = nhead nothing is saved: 0. The bigger saving is in memory: the KV "
                    "cache shrinks by nhead / nhead_kv.",
    ),
    Question(
        id="gqa-mqa", topic=TOPIC, kind="predict",
        prompt="Predict, then run: with nhead_kv = 1 (multi-query attention), which query heads read K/V head 0?",
        choices=_MQA,
        answer=outcome("kv_sharing", _mqa_readers, _MQA),
        evidence="kv_sharing",
        explanation="With one K/V head every query head is in its one group. Each head still has its own W^Q, so "
                    "each asks its own question of the same keys. The run changes K/V head 0 at your nhead with "
                    "nhead_kv = 1; the chart shows your own nhead_kv beside it.",
    ),
    Question(
        id="gqa-llama-qkv", topic=TOPIC, kind="numeric", tolerance=0.01, unit="millions", sizes=LLAMA2_70B,
        prompt="A learner's note says Llama-2-70B's width E=8192 leads to 'about 200M parameters just on 1 attention "
               "mechanism'. Count W^Q, W^K and W^V of one layer of the real model (64 query heads, 8 K/V heads of "
               "d_k=128, no biases). How many million? (within 1%)",
        answer=value("part_counts", "llama_qkv", millions), evidence="part_counts",
        explanation="The note's 200M is 3 x 8192², three full E x E matrices. Llama-2-70B uses grouped-query "
                    "attention: W^Q is 8192 x 8192 (67.1M), but W^K and W^V are 8192 x 1024 each (8.4M each), "
                    "83.9M in all, well under half. With W^O the block holds about 151M. Counted on the model "
                    "built on the meta device; the whole model counts 68,976,648,192 parameters, Meta's 70B.",
    ),
    Question(
        id="gqa-llama-total", topic=TOPIC, kind="numeric", unit="count", sizes=LLAMA2_70B,
        prompt="And the whole of Llama-2-70B (80 layers, SwiGLU FFNs of d_ff=28672, RMSNorm, a 32000-token "
               "vocabulary, untied output layer), counted on the model itself: how many parameters? (Exact, or "
               "rounded with B, as in 69.0B.)",
        answer=value("part_counts", "llama_total"), evidence="part_counts",
        explanation="80 layers of 151.0M attention and 704.6M SwiGLU FFN, two RMSNorms each, plus 262.1M for the "
                    "embedding and as many for the output layer: 68,976,648,192, the published 70B. The FFNs hold "
                    "most of it, not attention.",
    ),
)
