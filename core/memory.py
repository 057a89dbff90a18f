"""Parameter counts and memory estimates from the config alone, before anything is allocated.

``core.trace`` uses the estimate to decide between a real pass and a shape-only pass on the meta
device; the explorer draws it against M. The formulas are exact for what a trace keeps (the tests
compare them with a real pass), so the budget check cannot be fooled by a slider position.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import REAL_MODELS, TransformerConfig

FLOAT_BYTES = 4  # float32
INDEX_BYTES = 8  # int64 token ids
MASK_BYTES = 1  # bool masks
DEFAULT_BUDGET_BYTES = 256 * 2**20  # 256 MiB: weights and activations of one real pass


def attention_params(E: int, kv: int | None = None, bias: bool = True) -> int:
    """W^Q and W^O (E x E each) and W^K, W^V (E x kv, kv = nhead_kv * d_k), with biases when ``bias``:
    4(E^2 + E) for multi-head attention, whatever nhead is."""
    kv = E if kv is None else kv
    return 2 * (E * E + E * bias) + 2 * (E * kv + kv * bias)


def ffn_params(E: int, d_ff: int, swiglu: bool = False, bias: bool = True) -> int:
    """Linear(E, d_ff) and Linear(d_ff, E), with biases; SwiGLU has a second E x d_ff matrix (up)."""
    up = E * d_ff + d_ff * bias if swiglu else 0
    return E * d_ff + d_ff * bias + d_ff * E + E * bias + up


def layernorm_params(E: int) -> int:
    """A LayerNorm's gain and bias."""
    return 2 * E


def norm_params(cfg: TransformerConfig) -> int:
    """One norm: LayerNorm's gain and bias (no bias when ``bias`` is off), RMSNorm's gain alone."""
    return cfg.E if cfg.norm == "rmsnorm" or not cfg.bias else 2 * cfg.E


def param_counts(cfg: TransformerConfig) -> dict[str, int]:
    """Parameters per component and in total, counting a tied matrix once (formulas: ``param_formulas``)."""
    E, V, L = cfg.E, cfg.vocab_size, cfg.layers
    attn = attention_params(E, cfg.nhead_kv * cfg.d_k, cfg.bias)
    ffn = ffn_params(E, cfg.d_ff, cfg.activation == "swiglu", cfg.bias)
    norm, final = norm_params(cfg), norm_params(cfg) if cfg.norm_first else 0
    positions = cfg.max_len * E if cfg.positional == "learned" else 0
    if cfg.positional == "relative":  # T5: one (relative_buckets, nhead) table per stack
        positions = (2 if cfg.arch == "encoder-decoder" else 1) * cfg.relative_buckets * cfg.nhead
    if cfg.arch != "encoder-decoder":
        counts = {"token embeddings": V * E, "positional table": positions, "self-attention": L * attn,
                  "FFN": L * ffn, "norms": L * 2 * norm + final, "output layer": 0 if cfg.tie_embeddings else E * V}
    else:
        counts = {
            "token embeddings": V * E * (1 if cfg.tie_embeddings else 2),
            "positional table": positions,
            "encoder self-attention": L * attn,
            "encoder FFN": L * ffn,
            "encoder LayerNorms": L * 2 * norm + final,
            "decoder masked self-attention": L * attn,
            "decoder cross-attention": L * attn,
            "decoder FFN": L * ffn,
            "decoder LayerNorms": L * 3 * norm + final,
            "output layer": (0 if cfg.tie_embeddings else E * V) + V * cfg.bias,
        }
    counts["total"] = sum(counts.values())
    return counts


def param_formulas(cfg: TransformerConfig) -> dict[str, str]:
    """Each component's count as a formula in the learner's notation, keyed as ``param_counts`` is."""
    b = " + " if cfg.bias else ""
    kv = "nhead_kv·d_k"
    attn = f"2(E² + E·{kv})" + (f" + 2E + 2{kv}" if cfg.bias else "")
    ffn = ("3E·d_ff" if cfg.activation == "swiglu" else "2E·d_ff") + (
        (" + 2d_ff + E" if cfg.activation == "swiglu" else " + d_ff + E") if cfg.bias else "")
    norm = "E" if cfg.norm == "rmsnorm" or not cfg.bias else "2E"
    final = f" + {norm}" if cfg.norm_first else ""
    positions = "max_len·E" if cfg.positional == "learned" else "0"
    if cfg.positional == "relative":
        positions = ("2·" if cfg.arch == "encoder-decoder" else "") + "relative_buckets·nhead"
    if cfg.arch != "encoder-decoder":
        out = {"token embeddings": "vocab_size·E", "positional table": positions,
               "self-attention": f"layers·({attn})", "FFN": f"layers·({ffn})", "norms": f"layers·2·{norm}{final}",
               "output layer": "0 (tied)" if cfg.tie_embeddings else "E·vocab_size"}
    else:
        out = {"token embeddings": "vocab_size·E" + ("" if cfg.tie_embeddings else "·2"),
               "positional table": positions, "encoder self-attention": f"layers·({attn})",
               "encoder FFN": f"layers·({ffn})",
               "encoder LayerNorms": f"layers·2·{norm}{final}", "decoder masked self-attention": f"layers·({attn})",
               "decoder cross-attention": f"layers·({attn})", "decoder FFN": f"layers·({ffn})",
               "decoder LayerNorms": f"layers·3·{norm}{final}",
               "output layer": ("" if cfg.tie_embeddings else "E·vocab_size") + (f"{b}vocab_size" if cfg.bias else "")}
        out["output layer"] = out["output layer"].lstrip(" +") or "0 (tied)"
    out["total"] = " + ".join(out)
    return out


FP16_BYTES = 2


def kv_cache_bytes(cfg: TransformerConfig, G: int = 0, bytes_per_number: int = FLOAT_BYTES,
                   nhead_kv: int | None = None) -> int:
    """2 · layers · N · nhead_kv · (M + G) · d_k · bytes: K and V of every layer, every position so far
    (core.kv_cache). ``nhead_kv=cfg.nhead`` gives multi-head attention's figure for the same model."""
    heads = cfg.nhead_kv if nhead_kv is None else nhead_kv
    return 2 * cfg.layers * cfg.N * heads * (cfg.M + G) * cfg.d_k * bytes_per_number


def kv_cache_summary(cfg: TransformerConfig) -> dict[str, object]:
    """The prompt's cache as ``python -m core --json`` reports it: its shape and bytes (float32, as traced;
    fp16 beside it), and multi-head attention's float32 figure for the same sizes."""
    return {"shape": [cfg.layers, 2, cfg.N, cfg.nhead_kv, cfg.M, cfg.d_k], "bytes": kv_cache_bytes(cfg),
            "bytes_fp16": kv_cache_bytes(cfg, bytes_per_number=FP16_BYTES),
            "bytes_mha": kv_cache_bytes(cfg, nhead_kv=cfg.nhead)}


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes a real trace holds, split the way the explorer's memory chart shows them.

    ``attention`` is the part that grows with M^2 (scores and weights, and the causal mask);
    ``linear`` grows with M.
    ``transient`` covers the temporaries alive during the pass but not kept.
    """

    params: int
    linear: int
    attention: int
    vocab: int
    transient: int

    @property
    def activations(self) -> int:
        return self.linear + self.attention + self.vocab

    @property
    def total(self) -> int:
        return self.params + self.activations + self.transient

    def over(self, budget_bytes: int) -> bool:
        """True when a real pass would not fit ``budget_bytes``: the one rule that sends a trace to the
        meta device (core.trace) and that the pages ask before tracing (ui.traces)."""
        return self.total > budget_bytes


@dataclass(frozen=True)
class _Floats:
    """Float counts of one pass, by where they come from (shared by both estimates below)."""

    enc_layer: int  # one encoder layer's recorded activations, attention maps aside
    dec_layer: int  # the same for one decoder layer
    embed: int  # token embeddings, positions and their sums, both sides
    square: int  # one layer's attention maps of all three kinds, one tensor's worth (scores or weights)
    vocab: int  # logits and probabilities
    fixed_bytes: int  # token ids and the padding mask, which grow with the length
    causal_bytes: int  # the causal mask, (M_target, M_target): it grows with the square, as the maps do
    relative_bytes: int = 0  # T5's buckets and bias per stack, (L, L) and (nhead, L, L)


def _floats(cfg: TransformerConfig) -> _Floats:
    N, M, T, E, H, F = cfg.N, cfg.M, cfg.M_target or 0, cfg.E, cfg.nhead, cfg.d_ff
    F = 3 * F if cfg.activation == "swiglu" else F  # gate and up are kept beside the hidden layer
    # The embedding and the summed input are one tensor when no table is added (RoPE, T5's buckets, none).
    sums = 2 if cfg.positional in ("sinusoidal", "learned") else 1
    if cfg.arch != "encoder-decoder":  # one stack over M positions, counted as the encoder's
        table = 0 if cfg.positional in ("none", "relative") else (
            cfg.max_len if cfg.positional == "learned" else M) * E
        return _Floats(enc_layer=N * E * 6 * M + N * M * (3 * E + F), dec_layer=0, embed=sums * N * M * E + table,
                       square=N * H * M * M, vocab=2 * N * M * cfg.vocab_size,
                       fixed_bytes=INDEX_BYTES * N * M + MASK_BYTES * N * M, causal_bytes=MASK_BYTES * M * M,
                       relative_bytes=_relative_bytes(cfg, M))

    def attn_linear(Lq: int, S: int) -> int:
        """q, heads, concat, out have Lq rows; k and v have S rows."""
        return N * E * (4 * Lq + 2 * S)

    # Token embedding and sum per side; positions are computed per side when sinusoidal, or are views
    # of the learned table, which they then keep alive whole.
    positions = (M + T) * E if cfg.positional == "sinusoidal" else cfg.max_len * E
    positions = 0 if cfg.positional == "relative" else positions
    # Layer 0's first norm's statistics per source position (core.trace.norm_statistics), beside the paper's own.
    stats = 0 if not cfg.norm_first and cfg.norm == "layernorm" else (1 if cfg.norm == "rmsnorm" else 2) * N * M
    return _Floats(
        enc_layer=attn_linear(M, M) + N * M * (3 * E + F) + stats,  # + ffn_in, ffn.out, out, the d_ff hidden
        dec_layer=attn_linear(T, T) + attn_linear(T, M) + N * T * (3 * E + F),
        embed=sums * N * (M + T) * E + positions,
        square=N * H * (M * M + T * T + T * M),
        vocab=2 * N * T * cfg.vocab_size,
        fixed_bytes=INDEX_BYTES * N * (M + T) + MASK_BYTES * N * M,
        causal_bytes=MASK_BYTES * T * T,
        relative_bytes=_relative_bytes(cfg, M, T),
    )


def _relative_bytes(cfg: TransformerConfig, *lengths: int) -> int:
    """T5's buckets (L, L) and bias (nhead, L, L), once per stack of length L: they grow with the square."""
    if cfg.positional != "relative":
        return 0
    return sum((INDEX_BYTES + FLOAT_BYTES * cfg.nhead) * L * L for L in lengths)


def estimate(cfg: TransformerConfig) -> MemoryEstimate:
    """Bytes for one real trace of ``cfg``; exact for the tensors the trace keeps.

    The trace keeps every recorded tensor of layer 0, the attention weights of every deeper layer,
    and the stack outputs (see core.trace.TraceRecorder). This is what the memory budget is
    checked against; ``every_layer`` is the general picture the explorer's chart draws.
    """
    f = _floats(cfg)
    N, M, T, E, H, L = cfg.N, cfg.M, cfg.M_target or 0, cfg.E, cfg.nhead, cfg.layers
    stack_outputs = N * (M + T) * E if L > 1 else 0  # memory and dec.out, when not layer 0's own output
    linear_floats = f.enc_layer + f.dec_layer + f.embed + stack_outputs
    attention_floats = 2 * f.square + (L - 1) * f.square  # layer 0: scores and weights; deeper: weights
    if cfg.arch == "decoder-only":  # the prompt's KV cache, and the stacked copy the trace shows
        linear_floats += 2 * kv_cache_bytes(cfg) // FLOAT_BYTES
    head_weights = 3 * E * E  # layer 0's W^Q, W^K, W^V, all heads: views that keep its three (E, E) weights alive
    # Temporaries of a deeper layer while it runs: its activations and an unmasked score tensor.
    widest = max(M, T)
    transient = FLOAT_BYTES * (max(f.enc_layer, f.dec_layer) + 2 * N * H * widest * widest)
    return MemoryEstimate(
        params=FLOAT_BYTES * param_counts(cfg)["total"],
        linear=FLOAT_BYTES * (linear_floats + head_weights) + f.fixed_bytes,
        attention=FLOAT_BYTES * attention_floats + f.causal_bytes + f.relative_bytes,
        vocab=FLOAT_BYTES * f.vocab,
        transient=transient,
    )


def every_layer(cfg: TransformerConfig) -> MemoryEstimate:
    """Bytes of one forward pass that keeps every layer's activations, as training must keep
    activations for the backward pass; exact for the tensors the model records (a plain dict as its
    recorder). Autograd's own set differs: of each attention's scores and weights it saves only the
    weights (the softmax's gradient needs only its output), half of the attention term here.

    Why a second estimate: the trace keeps layer 0 whole but only the attention weights of deeper
    layers, so in ``estimate`` the attention maps outgrow the rest sooner the more layers there
    are. That is a fact about this app, not about Transformers. Counted layer by layer, each
    layer's maps (scores and weights, N x nhead x M^2 each) overtake that layer's other
    activations at about the same M whatever the depth; that is what the explorer draws.
    """
    f = _floats(cfg)
    L = cfg.layers
    return MemoryEstimate(
        params=FLOAT_BYTES * param_counts(cfg)["total"],
        linear=FLOAT_BYTES * (L * (f.enc_layer + f.dec_layer) + f.embed) + f.fixed_bytes,
        attention=FLOAT_BYTES * 2 * L * f.square + f.causal_bytes + f.relative_bytes,
        vocab=FLOAT_BYTES * f.vocab,
        transient=0,
    )


def human_bytes(n: float) -> str:
    """1536 -> '1.5 KiB': binary units, as memory is usually counted."""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    value = float(n)
    for unit in units:
        if abs(value) < 1024 or unit == units[-1]:
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} EiB"


# Each real model's published parameter count (its model card, or the paper for GPT-3), exact, and as the
# card names it: core.config.REAL_MODELS builds each one, and the tests hold the two equal.
PUBLISHED_PARAMS: dict[str, tuple[int, str]] = {
    "GPT-2 small": (124_439_808, "124M"), "GPT-3 175B": (174_604_259_328, "175B"),
    "Llama-2-7B": (6_738_415_616, "7B"), "Llama-2-70B": (68_976_648_192, "70B"),
    "Llama-3-8B": (8_030_261_248, "8B"),
}
# The fields a parameter count depends on: a real model's with another N, M or seed is the same model.
_COUNTED = ("arch", "E", "nhead", "nhead_kv", "layers", "d_ff", "vocab_size", "positional", "tie_embeddings",
            "norm", "norm_first", "activation", "bias", "relative_buckets")


def real_model(cfg: TransformerConfig) -> str | None:
    """The real model (core.config.REAL_MODELS) whose parts and widths this config has, if any."""
    for name, real in REAL_MODELS.items():
        same_table = cfg.positional != "learned" or cfg.max_len == real.max_len
        if same_table and all(getattr(cfg, f) == getattr(real, f) for f in _COUNTED):
            return name
    return None
