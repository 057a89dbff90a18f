"""What the command lines share: one-line errors, and the config's fields as flags.

``python -m core`` and ``python -m quizzes`` both describe one TransformerConfig. Writing its
fields as flags in one place keeps the two commands taking the same flags, spelled the same two
ways (``--vocab-size`` and ``--vocab_size``, as a learner copies them from the config's own names),
with the same help; every default is left to TransformerConfig, so a flag not given means what it
means everywhere else.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import MISSING, fields

from .config import ACTIVATIONS, ARCHS, ATTENTIONS, NORMS, PART_RANGES, POSITIONAL_KINDS, RANGES, TransformerConfig

_DEFAULTS = {f.name: f.default for f in fields(TransformerConfig) if f.default is not MISSING}

# Each field's flag: (help, what its default is when that depends on other fields).
_FLAGS: dict[str, tuple[str, str | None]] = {
    "N": ("batch size", None),
    "M": ("source length", None),
    "E": ("embedding size, d_model", None),
    "nhead": ("attention heads; must divide E", None),
    "vocab_size": ("vocabulary size", None),
    "M_target": ("target length, encoder-decoder only", "M"),
    "layers": ("layers of each stack", None),
    "d_ff": ("FFN hidden width", "4E"),
    "positional": ("positional encoding", None),
    "max_len": ("rows of a learned positional table", "the longer of M and M_target"),
    "tie_embeddings": ("one matrix for both embeddings and the output layer", None),
    "seed": ("seed of the weights and the batch", None),
    "arch": ("architecture family", None),
    "norm_first": ("pre-norm, with a final norm after each stack (--no-norm-first: post-norm, the paper's)", None),
    "norm": ("normalisation", None),
    "activation": ("FFN activation; swiglu has three d_ff-wide matrices", None),
    "nhead_kv": ("K/V heads, dividing nhead; 1 is multi-query attention", "nhead"),
    "bias": ("biases in the linear layers and norms", None),
    # Multi-head latent attention (DeepSeek-V2/V3): its widths are read only with --attention mla.
    "attention": ("mha: multi-head attention (grouped-query with --nhead-kv); mla: multi-head latent attention, "
                  "K and V made back from one cached latent", None),
    "kv_lora_rank": ("width of the cached latent c_KV, mla only", "4·E/nhead"),
    "q_lora_rank": ("width of the compressed query, mla only; 0 leaves the query uncompressed", None),
    "rope_head_dim": ("RoPE-turned part of each query and key, one shared key for all heads; even, mla only",
                      "E/nhead/2"),
    "nope_head_dim": ("unturned part of each query and key, mla only", "E/nhead"),
    "v_head_dim": ("width of each head's value, mla only", "E/nhead"),
    # --- Mixture of experts, head_dim, qk_norm and the sliding window ---
    "n_experts": ("experts in each MoE layer; 0 is a dense FFN", None),
    "top_k": ("experts each token goes through, at most n_experts", "2, or 1 with one expert"),
    "n_shared_experts": ("experts every token goes through as well", None),
    "d_ff_expert": ("each expert's hidden width", "d_ff"),
    "first_dense_layers": ("leading layers that keep the dense FFN", None),
    "norm_topk": ("renormalise the chosen experts' weights to sum to 1", None),
    "head_dim": ("each head's width d_k", "E // nhead"),
    "qk_norm": ("RMSNorm on each head's q and k", None),
    "window": ("a query sees at most this many last positions, itself included; 0 is full attention", None),
    "global_every": ("every k-th layer attends in full between windowed ones; 0 windows every layer", None),
    # --- end of the MoE / head_dim / window block ---
    # T5's parts
    "relative_buckets": ("buckets of T5's relative position bias (positional relative)", None),
    "relative_max_distance": ("offset from which T5's buckets stop growing (positional relative)", None),
    "scale_scores": ("divide the scores by sqrt(d_k) (--no-scale-scores: T5's, which folds it into W_q)", None),
    "scale_embeddings": ("the paper's sqrt(E) on the encoder-decoder's embeddings (--no-scale-embeddings: T5's, "
                         "which scales a tied output layer's input by 1/sqrt(E) instead)", None),
}
# The fields whose value is one word out of a list.
_CHOICES = {"positional": POSITIONAL_KINDS, "arch": ARCHS, "norm": NORMS, "activation": ACTIVATIONS,
            "attention": ATTENTIONS}


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2, never a usage block,
    the same as a main gives the config's own ValueErrors with ``return parser.fail(str(exc))``."""

    def error(self, message: str) -> None:  # argparse's own: a bad flag or a value of the wrong type
        sys.exit(self.fail(message))

    def fail(self, message: str) -> int:
        """Print ``prog: error: message`` as one line on stderr; return the exit status, 2."""
        print(f"{self.prog}: error: {' '.join(message.split())}", file=sys.stderr)
        return 2


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """Add a flag for every TransformerConfig field; each is None unless given (see ``config_from``)."""
    for name, (text, derived) in _FLAGS.items():
        spellings = [f"--{name.replace('_', '-')}"]
        if "_" in name:
            spellings.append(f"--{name}")
        default = derived if derived is not None else _DEFAULTS[name]
        if isinstance(_DEFAULTS[name], bool):
            parser.add_argument(*spellings, dest=name, action=argparse.BooleanOptionalAction, default=None,
                                help=f"{text} (default {default})")
        elif name in _CHOICES:
            parser.add_argument(*spellings, dest=name, choices=_CHOICES[name], help=f"{text} (default {default})")
        elif name == "nhead_kv":  # its range depends on nhead: the config checks it
            parser.add_argument(*spellings, dest=name, type=int, help=f"{text} (default {default})")
        else:
            low, high = RANGES[name] if name in RANGES else PART_RANGES[name]
            parser.add_argument(*spellings, dest=name, type=int, help=f"{text} ({low} to {high:,}; default {default})")


def add_cost_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags for what a cost depends on beyond the model (core.cost.CostSettings); each None unless given."""
    from .cost import OPTIMIZERS, RECOMPUTE, CostSettings, gpus

    d = CostSettings()
    parser.add_argument("--context", type=int, help="tokens of context for the KV cache and decoding (default M)")
    parser.add_argument("--batch", type=int, help="sequences decoded at once (default N)")
    parser.add_argument("--gpu", choices=[g.name for g in gpus()], help=f"the GPU (default {d.gpu})")
    parser.add_argument("--mfu", type=float, help=f"model FLOPs utilisation, a fraction of the peak (default {d.mfu})")
    parser.add_argument("--train-tokens", "--train_tokens", dest="train_tokens", type=float,
                        help="training tokens D (default the compute-optimal 20 x active parameters)")
    parser.add_argument("--optimizer", choices=list(OPTIMIZERS), help=f"training set-up (default {d.optimizer})")
    parser.add_argument("--zero-stage", "--zero_stage", dest="zero_stage", type=int, choices=(0, 1, 2, 3),
                        help="ZeRO stage: 1 shards the optimizer state, 2 the gradients too, 3 the weights too")
    parser.add_argument("--data-parallel", "--data_parallel", dest="data_parallel", type=int,
                        help="GPUs the ZeRO stage shards over (default 1)")
    parser.add_argument("--recompute", choices=RECOMPUTE, help="activation recomputation (default none)")
    parser.add_argument("--flash", action=argparse.BooleanOptionalAction, default=None,
                        help="FlashAttention: the attention map is never stored")


def cost_settings_from(args: argparse.Namespace):
    """The CostSettings the flags describe; raises its ValueError for a bad value."""
    from .cost import CostSettings

    names = ("context", "batch", "gpu", "mfu", "train_tokens", "optimizer", "zero_stage", "data_parallel",
             "recompute", "flash")
    return CostSettings(**{n: getattr(args, n) for n in names if getattr(args, n, None) is not None})


def config_from(args: argparse.Namespace) -> TransformerConfig:
    """The config the flags describe; raises TransformerConfig's ValueError for a bad value."""
    given = {name: getattr(args, name) for name in _FLAGS if getattr(args, name) is not None}
    return TransformerConfig(**given)


def run_main(main: Callable[[], int]) -> int:
    """Run a command's ``main`` and return its exit status, quietly when its reader goes away.

    ``python -m core | head`` closes the pipe after ten lines; writing on makes Python raise
    BrokenPipeError, and print a traceback as it exits. The reader has what it asked for, so the
    command stops there: stdout is pointed at /dev/null (so the exit's own flush cannot fail again,
    as the Python docs on SIGPIPE advise) and the status is 1, as for any write that failed.
    """
    try:
        status = main()
        sys.stdout.flush()  # inside the try: a pipe that closed shows up here at the latest
        return status
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
