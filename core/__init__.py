"""Transformer Shape Explorer core: the model, its recorded forward pass, and experiments.

PyTorch and the standard library only; nothing here knows it is being displayed. Importing it
has no side effects: it sets no environment variable, runs no kernel and starts no thread.
"""

from .config import (DEFAULT, PAPER_BASE, PAPER_BIG, PRESETS, REAL_MODELS, SEED_NOTE, SEED_NOTEBOOK,
                     TransformerConfig, divisors)
from .latent_attention import LatentAttention
from .memory import DEFAULT_BUDGET_BYTES, estimate, human_bytes, param_counts
from .model import (CausalLM, DecoderLayer, EncoderLayer, FeedForward, MultiHeadAttention, PositionalEncoding,
                    Transformer, generate_key_padding_mask, generate_square_subsequent_mask)
from .rows import EXTRAS, ROWS, formula_shape
from .trace import Trace, TensorRow, trace

__all__ = [
    "TransformerConfig", "PRESETS", "REAL_MODELS", "DEFAULT", "SEED_NOTE", "SEED_NOTEBOOK", "PAPER_BASE",
    "PAPER_BIG", "divisors",
    "DEFAULT_BUDGET_BYTES", "estimate", "human_bytes", "param_counts",
    "Transformer", "CausalLM", "EncoderLayer", "DecoderLayer", "MultiHeadAttention", "LatentAttention",
    "FeedForward", "PositionalEncoding", "generate_square_subsequent_mask", "generate_key_padding_mask",
    "ROWS", "EXTRAS", "formula_shape", "Trace", "TensorRow", "trace",
]
