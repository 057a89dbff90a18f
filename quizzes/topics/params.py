"""Parameter counts, from modules built on the meta device."""

from core.config import LLAMA2_70B, PAPER_BASE, PAPER_BIG, TransformerConfig
from quizzes.questions import (PAPER, WITH_DECODER, Question, fixed, millions, multi_head, paper_layer, param,
                               value)

TOPIC = "Parameter counts"

_STACK = (
    "One after another: each layer reads the previous layer's output. In training, the positions inside a "
    "layer are what run in parallel.",
    "All layers in parallel, since they have separate weights.",
    "In parallel in the decoder, one after another in the encoder.",
)


def total_formula(c: TransformerConfig) -> str:
    """The whole model's count in symbols, part by part as core.memory.param_counts adds it up:
    embeddings, the positional table, the encoder's layers (attention, FFN, two LayerNorms), the
    decoder's (two attentions, FFN, three LayerNorms), and the output layer. A tied matrix is
    counted once, in the embeddings, and leaves the output layer only its bias."""
    embeddings = "vocab_size*E" if c.tie_embeddings else "2*vocab_size*E"
    positional = " + max_len*E" if c.positional == "learned" else ""
    encoder = "layers*(4*E^2 + 2*E*d_ff + d_ff + 9*E)"
    decoder = "layers*(8*E^2 + 2*E*d_ff + d_ff + 15*E)"
    output = "vocab_size" if c.tie_embeddings else "vocab_size*E + vocab_size"
    return f"{embeddings}{positional} + {encoder} + {decoder} + {output}"


QUESTIONS = (
    Question(
        id="params-qkv", topic=TOPIC,
        when=multi_head, kind="numeric", parametric=True, unit="count", expression="3*E^2",
        prompt="How many weights (biases not counted) do W^Q, W^K and W^V hold together in one attention block "
               "at E={E}?",
        answer=value("parameter_counts", "qkv_weights"), evidence="parameter_counts",
        explanation="Three E x E matrices, W_q, W_k and W_v: 3E². "
                    "The heads split these matrices; they do not add to them.",
    ),
    Question(
        id="params-qkv-bias", topic=TOPIC,
        when=lambda c: multi_head(c) and c.bias,
        kind="numeric", parametric=True, unit="count", expression="3*E^2 + 3*E",
        prompt="And with their biases, how many parameters do the Q, K and V projections have at E={E}?",
        answer=value("parameter_counts", "qkv_with_bias"), evidence="parameter_counts",
        explanation="3E² weights plus three E-long biases: 3E² + 3E.",
    ),
    Question(
        id="params-embedding", topic=TOPIC, kind="numeric", parametric=True, unit="count", expression="vocab_size*E",
        prompt="How many parameters does one token embedding table have with vocab_size={vocab_size} and E={E}?",
        answer=value("parameter_counts", "embedding"), evidence="parameter_counts",
        explanation="One E-wide row per token: vocab_size x E.",
    ),
    Question(
        id="params-llama-qkv", topic=TOPIC, kind="numeric", tolerance=0.01, unit="millions",
        sizes=LLAMA2_70B,
        prompt="Llama-2-70B has E=8192. At that width, how many million weights do full "
               "multi-head W^Q, W^K and W^V hold together? (within 1%)",
        answer=value("parameter_counts", "llama_qkv_weights", millions), evidence="parameter_counts",
        explanation="3 × 8192² ≈ 201.3 million. (The real Llama-2-70B uses grouped-query attention, with 8 "
                    "shared key/value heads, so its W^K and W^V are 8 times narrower than this.)",
    ),
    Question(
        id="params-llama-embedding", topic=TOPIC, kind="numeric", tolerance=0.01, unit="millions",
        sizes=LLAMA2_70B,
        prompt="With 32000 tokens and E=8192, how many million parameters does the token embedding have? "
               "(within 1%)",
        answer=value("parameter_counts", "llama_embedding", millions), evidence="parameter_counts",
        explanation="32000 × 8192 = 262,144,000: about 262 million, counted on a meta-device nn.Embedding.",
    ),
    Question(
        id="params-paper-base", topic=TOPIC, kind="numeric", tolerance=0.01, unit="millions",
        sizes=PAPER_BASE,
        prompt="Our model at the paper's base sizes (E=512, nhead=8, d_ff=2048, 6+6 layers, one 37000-token "
               "vocabulary for source and target, and, as in the paper's section 3.4, one matrix shared by both "
               "embeddings and the pre-softmax layer): how many million parameters? (within 1%)",
        answer=value("parameter_counts", "paper_base_total", millions), evidence="parameter_counts",
        explanation="About 63 million with the one tied matrix; the paper's Table 3 says 65M. The paper does not "
                    "break its count down, so the gap cannot be pinned here. One candidate is the vocabulary: "
                    "each 1000 more tokens add 513,000 parameters (512,000 in the shared matrix, 1000 in the output "
                    "layer's bias), and about 40,700 tokens would make 65M. Untied "
                    "(two embeddings and an output matrix of their own), the same sizes hold about 101 million.",
    ),
    Question(
        id="params-paper-big", topic=TOPIC, kind="numeric", tolerance=0.01, unit="millions",
        sizes=PAPER_BIG,
        prompt="And at the paper's big sizes (E=1024, nhead=16, d_ff=4096, 6+6 layers, the same vocabulary and the "
               "same tied matrix)? In millions (within 1%).",
        answer=value("parameter_counts", "paper_big_total", millions), evidence="parameter_counts",
        explanation="About 214 million, close to the paper's 213M. Doubling E (with d_ff) quadruples every "
                    "E x E and E x d_ff matrix, while the vocab_size x E embedding only doubles, so the total "
                    "grows by less than four times.",
    ),
    Question(
        id="params-total", topic=TOPIC,
        families=PAPER, when=paper_layer, kind="numeric", parametric=True, unit="count", expression=total_formula,
        prompt="How many parameters does the model in the sidebar have in total? (Exact, or rounded with K, M or B, "
               "as in 12.3K or 63.1M: the count rounded to the digits you give, within 1%.)",
        answer=param("total"), evidence="parameter_counts",
        explanation="Embeddings, positional table, every attention block, FFN and LayerNorm, and the output layer, "
                    "with a tied matrix counted once.",
    ),
    Question(
        id="params-stack", topic=TOPIC, families=WITH_DECODER, kind="choice",
        prompt="Each of the decoder's layers (layers={layers}) has its own parameters. Do the layers run in "
               "parallel?",
        choices=_STACK, answer=fixed(0, _STACK), evidence="parameter_counts",
        explanation="Layer k+1 needs layer k's output, so depth is sequential, like time in an RNN; the width of "
                    "the parallel work is the positions (and the batch).",
    ),
)
