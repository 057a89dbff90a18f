"""Live evidence for the quizzes: small, seeded experiments on the model a config describes.

Each experiment answers one question a learner asks ("does a future token change earlier
outputs?", "why divide by sqrt(d_k)?") by running our own modules, and returns an ``Evidence``:
plain numbers, a few chart records and a note. Nothing here knows it is displayed, but each
experiment names its numbers in words a learner reads (its ``..._LABELS``, just above it), since
only it knows what each one measured.

Every experiment is bounded, whatever the config: lengths, widths and depths are capped (see
``bounded``) and the note says so, and parameter counts of big configs are read off the meta
device, where PyTorch builds the modules without allocating their weights. A shape the learner
is asked for is shown at their own sizes: read off a shape-only trace, or, for the GRU, measured
when a real one of their sizes is cheap and otherwise worked out from a smaller real run, which
the note says (``gru_run``). Everything is seeded and runs on the CPU, under ``torch.no_grad``
unless gradients are the point.

The experiments live by topic: ``order`` (an RNN's steps against attention, positions), ``layers``
(skip connections, the FFN), ``attention`` (scaling, heads, the softmax's axis), ``masking`` (the
causal mask, the shifted target) and ``shapes`` (parameter counts and shapes); ``base`` holds the
caps, ``Evidence`` and ``bounded``. The later parts have their own: ``families`` (what each family keeps,
and the counts of GQA, SwiGLU and the norms), ``heads`` (shared K/V heads and the KV cache), ``rope``,
``relative`` (T5's buckets, shared embedding and unscaled scores), ``norms`` (RMSNorm against LayerNorm,
pre-norm against post-norm) and ``parts`` (experts, latent attention, a sliding window, the heads' width). This package names them all and runs one by name.
"""

from __future__ import annotations

from typing import Callable

from core.config import TransformerConfig
from core.trace import Trace
from .attention import ENTROPY_KEYS, SCALE_WIDTHS, head_options, model_scale_width, score_scaling, softmax_axis
from .base import (MAX_DEPTH, MAX_FF, MAX_FFN_PROBE_WIDTH, MAX_GRU_ELEMENTS, MAX_GRU_STEPS, MAX_GRU_WIDTH, MAX_GRU_WORK,
                   MAX_HEAD_TRIES, MAX_LEN, MAX_MASK_DRAWN, MAX_MASK_SIDE, MAX_SCORE_WIDTH, MAX_VOCAB, MAX_WIDTH,
                   MIN_WIDTH, NUDGES, PROBE_INPUTS, PROBE_WIDTH, RAISED_WIDTH, SIZE_LABELS, Evidence, bounded,
                   raised_note)
from .decoding import decoding
from .cost import cost
from .families import family_parts, family_reach, part_counts
from .heads import kv_cache, kv_sharing
from .layers import ffn_layers, residual_ablation
from .norms import norm_compare, pre_post_gradient
from .masking import causal_probe, mask_counts, shift_right
from .order import dependency_maps, gru_run, learned_positions, permutation
from .parts import head_parts, latent_cache, routing, window_reach
from .relative import relative_probe
from .rope import rope_probe
from .shapes import attention_shapes, batch_first, parameter_counts, pass_shapes

EXPERIMENTS: dict[str, Callable[[TransformerConfig], Evidence]] = {
    f.__name__: f for f in (dependency_maps, permutation, residual_ablation, score_scaling, head_options,
                            ffn_layers, learned_positions, causal_probe, mask_counts, shift_right,
                            parameter_counts, softmax_axis, batch_first, attention_shapes, pass_shapes,
                            family_parts, family_reach, part_counts, kv_sharing, kv_cache, rope_probe, norm_compare,
                            pre_post_gradient, relative_probe, decoding, cost, routing, latent_cache, window_reach,
                            head_parts)
}


# The experiments that read a shape-only trace of the config, and take one made already.
TAKES_SHAPES = frozenset({"attention_shapes", "pass_shapes", "routing", "latent_cache", "window_reach", "head_parts"})


def run(name: str, cfg: TransformerConfig, shapes: Trace | None = None) -> Evidence:
    """Run one experiment by name (see ``EXPERIMENTS``). ``shapes``, a trace of ``cfg`` the caller
    has already, spares the experiments in TAKES_SHAPES a trace of their own when it is shape-only;
    the others ignore it."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; choose one of {', '.join(EXPERIMENTS)}")
    if name in TAKES_SHAPES:
        return EXPERIMENTS[name](cfg, shapes)
    return EXPERIMENTS[name](cfg)


__all__ = [
    "Evidence", "EXPERIMENTS", "TAKES_SHAPES", "run", "bounded", "raised_note", "gru_run", "model_scale_width",
    "SCALE_WIDTHS", "SIZE_LABELS", "MAX_DEPTH", "MAX_FF", "MAX_FFN_PROBE_WIDTH", "MAX_GRU_ELEMENTS", "MAX_GRU_STEPS",
    "MAX_GRU_WIDTH", "MAX_GRU_WORK", "MAX_HEAD_TRIES", "MAX_LEN", "MAX_MASK_DRAWN", "MAX_MASK_SIDE",
    "MAX_SCORE_WIDTH", "MAX_VOCAB", "MAX_WIDTH", "MIN_WIDTH", "NUDGES", "PROBE_INPUTS", "PROBE_WIDTH",
    "RAISED_WIDTH", "ENTROPY_KEYS", *EXPERIMENTS,
]
