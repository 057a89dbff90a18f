"""Configs the tests share that are no preset: a real model's widths in another family."""

from core import TransformerConfig

# The paper's encoder-decoder at GPT-3 175B's widths, 96+96 layers: far over any budget, so traced shape-only.
ENC_DEC_AT_GPT3_WIDTHS = TransformerConfig(N=64, M=2048, E=12288, nhead=96, layers=96, vocab_size=50257,
                                           tie_embeddings=True)
# The paper's encoder-decoder at GPT-2 small's widths: over the budget for a pass with values.
ENC_DEC_AT_GPT2_WIDTHS = TransformerConfig(N=8, M=1024, E=768, nhead=12, layers=12, vocab_size=50257,
                                           tie_embeddings=True)
