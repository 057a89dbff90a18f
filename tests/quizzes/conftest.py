"""Shared contexts: pairs of configs of each family that differ in every field a parametric answer can read."""

import pytest

from core import TransformerConfig
from core.config import TINY_LLAMA, TINY_MLA, TINY_MOE
from quizzes import Context

CONFIG_A = TransformerConfig(N=2, M=8, E=16, nhead=2, vocab_size=100)
CONFIG_B = TransformerConfig(N=3, M=6, M_target=5, E=24, nhead=4, vocab_size=50, layers=3, d_ff=40,
                             positional="learned")
# Llama's parts (GQA, RoPE, RMSNorm, SwiGLU, pre-norm, no biases), then MQA with biases at other sizes.
DECODER_A = TransformerConfig(arch="decoder-only", N=2, M=8, E=16, nhead=4, nhead_kv=2, vocab_size=100,
                              positional="rope", norm="rmsnorm", activation="swiglu", norm_first=True, bias=False)
DECODER_B = TransformerConfig(arch="decoder-only", N=3, M=6, E=36, nhead=6, nhead_kv=1, vocab_size=50, layers=3,
                              d_ff=40, positional="rope", norm="rmsnorm", activation="swiglu", norm_first=True)
# GPT-2's parts: learned positions, GELU, pre-norm LayerNorm; and the paper's layer in one causal stack.
DECODER_GPT = TransformerConfig(arch="decoder-only", N=1, M=5, E=12, nhead=3, vocab_size=40, positional="learned",
                                activation="gelu", norm_first=True, tie_embeddings=True)
DECODER_PLAIN = TransformerConfig(arch="decoder-only", N=2, M=7, E=20, nhead=2, vocab_size=30, layers=3)
ENCODER_A = TransformerConfig(arch="encoder-only", N=2, M=8, E=16, nhead=2, vocab_size=100)
ENCODER_B = TransformerConfig(arch="encoder-only", N=3, M=6, E=24, nhead=4, nhead_kv=2, vocab_size=50, layers=3,
                              d_ff=40, positional="learned", activation="gelu", norm_first=True)

# T5's parts (relative positions, pre-norm RMSNorm, no bias, one shared matrix, no 1/sqrt(d_k)): A's 8 buckets
# share far offsets at M = 8, B's 32 give each of its offsets a bucket.
T5_A = TransformerConfig(N=2, M=8, E=16, nhead=2, vocab_size=100, d_ff=32, positional="relative", relative_buckets=8,
                         relative_max_distance=16, norm="rmsnorm", norm_first=True, bias=False, tie_embeddings=True,
                         scale_scores=False, scale_embeddings=False)
T5_B = T5_A.replace(N=3, M=6, M_target=5, E=24, nhead=4, vocab_size=50, layers=3, d_ff=40, relative_buckets=32,
                    relative_max_distance=128)

# Each family's configs; a pair of the same family is compared by the parametric test.
FAMILY_CONFIGS = {
    "encoder-decoder": (CONFIG_A, CONFIG_B, T5_A, T5_B),
    "decoder-only": (DECODER_A, DECODER_B, DECODER_GPT, DECODER_PLAIN),
    "encoder-only": (ENCODER_A, ENCODER_B),
}
ALL_CONFIGS = tuple(c for configs in FAMILY_CONFIGS.values() for c in configs)
CONFIG_IDS = ("paper A", "paper B", "T5 A", "T5 B", "Llama-like", "MQA", "GPT-like", "paper layer, causal", "BERT A", "BERT B")

# The later parts, each in two or more configs of different sizes and seeds, so a parametric answer must
# change.
PART_CONFIGS = {
    "Tiny MoE": TINY_MOE,
    "MoE, GELU, biases": TransformerConfig(arch="decoder-only", N=3, M=6, E=24, nhead=4, vocab_size=50, layers=2,
                                           activation="gelu", norm_first=True, n_experts=6, top_k=3, d_ff_expert=12,
                                           seed=3),
    "MoE encoder": TransformerConfig(arch="encoder-only", N=2, M=5, E=12, nhead=3, vocab_size=40, n_experts=4,
                                     top_k=1, n_shared_experts=2, d_ff_expert=10, seed=5),
    "Tiny MLA": TINY_MLA,
    "MLA, uncompressed query": TINY_MLA.replace(N=1, M=6, E=24, nhead=3, kv_lora_rank=10, q_lora_rank=0,
                                                rope_head_dim=6, nope_head_dim=5, v_head_dim=7, layers=3, bias=True,
                                                seed=1),
    "MLA with experts": TINY_MLA.replace(n_experts=4, top_k=2, n_shared_experts=1, d_ff_expert=6,
                                         first_dense_layers=1, norm_topk=False, seed=2),
    "window": TINY_LLAMA.replace(window=3),
    "window, full every 2nd": TINY_LLAMA.replace(N=1, M=12, window=5, layers=4, global_every=2, seed=2),
    "window, GPT": TransformerConfig(arch="decoder-only", N=2, M=9, E=12, nhead=3, vocab_size=40, layers=3,
                                     positional="learned", activation="gelu", norm_first=True, window=2, seed=4),
    "head_dim and qk_norm": TINY_LLAMA.replace(head_dim=6, qk_norm=True),
    "head_dim, encoder": TransformerConfig(arch="encoder-only", N=2, M=6, E=24, nhead=4, head_dim=8, vocab_size=50,
                                           seed=1),
    "qk_norm, paper": TransformerConfig(N=2, M=5, E=24, nhead=3, vocab_size=50, layers=3, qk_norm=True),
}
_CONTEXTS: dict[TransformerConfig, Context] = {}


def context(cfg: TransformerConfig) -> Context:
    """One Context per config for the whole session: each runs its experiments once."""
    if cfg not in _CONTEXTS:
        _CONTEXTS[cfg] = Context(cfg)
    return _CONTEXTS[cfg]


@pytest.fixture(scope="session")
def ctx_a() -> Context:
    return context(CONFIG_A)


@pytest.fixture(scope="session")
def ctx_b() -> Context:
    return context(CONFIG_B)
