"""Sizes and shapes: parameter counts, PyTorch's batch-first layout, and the shapes of attention and of
the whole pass at the learner's own sizes (the parameter and shape questions)."""

from __future__ import annotations

import torch
from torch import nn

from core.config import LLAMA2_70B, PAPER_BASE, PAPER_BIG, TransformerConfig
from core.model import FeedForward, MultiHeadAttention, Transformer
from core.trace import Trace, trace
from .base import SIZE_LABELS, Evidence


def _count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


PARAMETER_COUNTS_LABELS = {
    "qkv_weights": "W^Q, W^K, W^V at your E, weights only",
    "qkv_with_bias": "W^Q, W^K, W^V at your E, with their biases",
    "attention_block": "one attention block at your E: Q, K, V, O and biases",
    "embedding": "one token embedding, vocab_size × E",
    "llama_qkv_weights": f"W^Q, W^K, W^V at Llama-2-70B's E={LLAMA2_70B.E}, weights only",
    "llama_embedding": f"token embedding at Llama-2-70B's {LLAMA2_70B.vocab_size} × {LLAMA2_70B.E}",
    "paper_base_total": f"our whole model at the paper's base sizes (E={PAPER_BASE.E})",
    "paper_big_total": f"our whole model at the paper's big sizes (E={PAPER_BIG.E})",
    "model_total": "our whole model at your config",
    "number_of_layer_norms": "LayerNorms in the whole model (a count of modules)",
    "number_of_ffn_blocks": "FFN blocks in the whole model (a count of modules)",
    "number_of_attention_blocks": "attention blocks in the whole model (a count of modules)",
}


def parameter_counts(cfg: TransformerConfig) -> Evidence:
    """Parameters counted on modules built on the meta device: no weights are allocated.

    Covers the config's attention block and embedding, the fourth seed note's Llama-2-70B widths
    (E=8192, 32000 tokens) and our model at the paper's base and big sizes.
    """
    mha = MultiHeadAttention(cfg.E, cfg.nhead, device="meta")
    qkv_weights = sum(W.weight.numel() for W in (mha.W_q, mha.W_k, mha.W_v))  # one (E, E) matrix each
    qkv_all = sum(_count(W) for W in (mha.W_q, mha.W_k, mha.W_v))
    embedding = nn.Embedding(cfg.vocab_size, cfg.E, device="meta")
    llama = MultiHeadAttention(LLAMA2_70B.E, LLAMA2_70B.nhead, device="meta")
    llama_qkv = sum(W.weight.numel() for W in (llama.W_q, llama.W_k, llama.W_v))
    llama_embed = nn.Embedding(LLAMA2_70B.vocab_size, LLAMA2_70B.E, device="meta").weight.numel()
    model = Transformer.from_config(cfg, device="meta")
    base = _count(Transformer.from_config(PAPER_BASE, device="meta"))
    big = _count(Transformer.from_config(PAPER_BIG, device="meta"))
    values = {
        "qkv_weights": qkv_weights, "qkv_with_bias": qkv_all, "attention_block": _count(mha),
        "embedding": embedding.weight.numel(), "llama_qkv_weights": llama_qkv, "llama_embedding": llama_embed,
        "paper_base_total": base, "paper_big_total": big, "model_total": _count(model),
        # Counts of modules, not of parameters: named so, since they sit among parameter counts.
        "number_of_layer_norms": sum(isinstance(m, nn.LayerNorm) for m in model.modules()),
        "number_of_ffn_blocks": sum(isinstance(m, FeedForward) for m in model.modules()),
        "number_of_attention_blocks": sum(isinstance(m, MultiHeadAttention) for m in model.modules()),
    }
    records = [{"what": "W^Q, W^K, W^V (this E)", "parameters": qkv_weights},
               {"what": "token embedding (this config)", "parameters": values["embedding"]},
               {"what": "whole model (this config)", "parameters": values["model_total"]},
               {"what": "Llama-2-70B widths: W^Q, W^K, W^V", "parameters": llama_qkv},
               {"what": "Llama-2-70B widths: embedding", "parameters": llama_embed},
               {"what": "paper base (ours)", "parameters": base},
               {"what": "paper big (ours)", "parameters": big}]
    return Evidence("parameter_counts", "Parameter counts from modules built on the meta device", values, records,
                    {"kind": "bar", "x": "what", "y": "parameters", "log_y": "true", "horizontal": "true"},
                    "Counted on the meta device: shapes only, nothing allocated.", PARAMETER_COUNTS_LABELS)


BATCH_FIRST_LABELS = {
    "ours": "our source embedding's shape, (N, M, E)",
    "pytorch_default": "output shape of PyTorch's encoder layer, default layout",
    "pytorch_batch_first_flag": "PyTorch's layer is batch_first by default",
}


def batch_first(cfg: TransformerConfig) -> Evidence:
    """PyTorch's nn.TransformerEncoderLayer with its default batch_first=False, on the meta device."""
    ours = (cfg.N, cfg.M, cfg.E)
    theirs = (cfg.M, cfg.N, cfg.E)
    layer = nn.TransformerEncoderLayer(cfg.E, cfg.nhead, cfg.d_ff, device="meta")
    out = layer(torch.empty(*theirs, device="meta"))  # (M, N, E)
    values = {"ours": ours, "pytorch_default": tuple(out.shape),
              "pytorch_batch_first_flag": layer.self_attn.batch_first}
    records = [{"layout": "ours (batch_first)", "axis": i, "size": s} for i, s in enumerate(ours)] + \
              [{"layout": "nn.Transformer default", "axis": i, "size": s} for i, s in enumerate(theirs)]
    return Evidence("batch_first", "Source embedding layout: ours against PyTorch's default", values, records,
                    {"kind": "bar", "x": "axis", "y": "size", "color": "layout"}, "",
                    BATCH_FIRST_LABELS)


def _shape_trace(cfg: TransformerConfig, shapes: Trace | None) -> Trace:
    """A shape-only trace of ``cfg``: ``shapes`` when it is one (the app has traced this config
    already), else a new one, so that the quiz page, attention_shapes and pass_shapes share one
    deep trace rather than making three."""
    if shapes is not None and shapes.shape_only and shapes.config == cfg:
        return shapes
    return trace(cfg, shape_only=True)


ATTENTION_SHAPES_LABELS = {
    "d_k": SIZE_LABELS["d_k"],
    "nhead": SIZE_LABELS["nhead"],
    "q_stacked": "Q of every head, stacked",
    "q_one_head": "Q of one head (K and V alike)",
    "weights": "attention weights, every head",
    "concat": "the heads concatenated",
}


def attention_shapes(cfg: TransformerConfig, shapes: Trace | None = None) -> Evidence:
    """The first layer's self-attention (the encoder's, or a decoder-only model's), step by step, with the
    shapes a trace of this very config reads off its tensors. Shape-only (meta device), so any size costs
    milliseconds and the shapes are the ones a real pass gives (tests/core checks the two agree). ``shapes``: a
    shape-only trace of ``cfg`` already made, used instead of a new one (see _shape_trace)."""
    t = _shape_trace(cfg, shapes)
    # The first layer of the stack the family has: a decoder-only model's is a decoder layer.
    side, attn = ("tgt", "dec.0.self_attn.") if cfg.arch == "decoder-only" else ("src", "enc.0.self_attn.")
    one_head = "qkv_one_head" if cfg.arch == "encoder-decoder" else "q_one_head"
    steps = [  # (what, recorded hook or row key, formula, the row or extra of core.rows it shows, if any)
        ("input x (embedding + position)", f"{side}.sum", "(N, M, E)", "summed_embedding"),
        ("Q = x W^Q + b, every head, stacked", attn + "q", "(N, nhead, M, d_k)", "q_stacked"),
        ("one head's Q (K and V alike)", one_head, "(N, M, d_k)", one_head),
        ("scores Q K^T / sqrt(d_k), plus the mask", attn + "scores", "(N, nhead, M, M)", "scores_pre_softmax"),
        ("weights: softmax over the keys", attn + "weights", "(N, nhead, M, M)", "attention_scores"),
        ("each head: weights @ V", attn + "heads", "(N, nhead, M, d_k)", "heads_stacked"),
        ("heads concatenated", attn + "concat", "(N, M, E)", "concatenated_heads"),
        ("after W^O", attn + "out", "(N, M, E)", ""),
    ]
    # "key" names the row a question asks about, so the quiz can point at it (it is not shown).
    records = [{"step": what, "live shape": str(tuple(t.shapes[hook]) if hook in t.shapes else t.row(hook).shape),
                "formula": formula, "key": row}
               for what, hook, formula, row in steps]
    values = {"d_k": cfg.d_k, "nhead": cfg.nhead, "q_stacked": tuple(t.shapes[attn + "q"]),
              "q_one_head": t.row(one_head).shape, "weights": tuple(t.shapes[attn + "weights"]),
              "concat": tuple(t.shapes[attn + "concat"])}
    return Evidence("attention_shapes", "One attention block, step by step, with this config's shapes", values,
                    records, {"kind": "table"},
                    f"Read off a shape-only trace of this config: E = {cfg.E} splits into nhead = {cfg.nhead} "
                    f"heads of d_k = {cfg.d_k}, and the heads joined side by side are E wide again.",
                    ATTENTION_SHAPES_LABELS)


# The extras a shape question may ask about, shown after the rows: those the config's family and parts have.
PASS_EXTRAS = ("target_tokens", "W_Q", "causal_mask", "key_padding_mask", "decoder_self_scores", "cross_scores",
               "ffn_hidden", "logits", "k_stacked", "swiglu_gate", "kv_cache")


def pass_shapes(cfg: TransformerConfig, shapes: Trace | None = None) -> Evidence:
    """The whole forward pass, tensor by tensor: the 14 rows of the explorer's table and the extras
    the quiz asks about, with their formulas and this config's live shapes. Shape-only (meta
    device), so it costs milliseconds at any size and gives the shapes a real pass gives.
    ``shapes``: as in attention_shapes."""
    t = _shape_trace(cfg, shapes)
    in_rows, extras = {r.key for r in t.rows}, {r.key for r in t.extras}
    shown = [*t.rows, *(t.row(key) for key in PASS_EXTRAS if key in extras and key not in in_rows)]
    # "key" names the row a question asks about, so the quiz can point at it (it is not shown).
    # The live shape before its formula, as in the explorer's table: a phone shows the first columns.
    records = [{"#": str(r.index) if r.index else "extra", "tensor": r.name, "live shape": str(r.shape),
                "formula": r.formula, "key": r.key} for r in shown]
    # The table is the evidence; beside it, what each symbol of the formulas stands for here.
    values = {"N": cfg.N, "M": cfg.M, "M_target": cfg.M_target, "E": cfg.E, "nhead": cfg.nhead,
              "nhead_kv": cfg.nhead_kv, "d_k": cfg.d_k, "d_ff": cfg.d_ff, "vocab_size": cfg.vocab_size,
              "layers": cfg.layers}
    if cfg.M_target is None:  # one stack, one sequence
        del values["M_target"]
    sizes = ", ".join(f"{k}={v}" for k, v in values.items() if k not in ("d_k", "d_ff", "layers"))
    return Evidence("pass_shapes", "The forward pass, tensor by tensor, with this config's shapes", values, records,
                    {"kind": "table"},
                    f"Read off a shape-only trace of this config ({sizes}): the same table as the explorer's.",
                    {k: SIZE_LABELS[k] for k in values})
