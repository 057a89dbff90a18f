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


def attention_params(E: int, kv: int | None = None, bias: bool = True, q: int | None = None) -> int:
    """W^Q and W^O (E x q each, q = nhead * d_k, which is E unless head_dim says otherwise) and W^K, W^V
    (E x kv, kv = nhead_kv * d_k), with biases when ``bias``: 4(E^2 + E) for multi-head attention, whatever
    nhead is."""
    kv = E if kv is None else kv
    q = E if q is None else q
    return (E * q + q * bias) + (q * E + E * bias) + 2 * (E * kv + kv * bias)


def ffn_params(E: int, d_ff: int, swiglu: bool = False, bias: bool = True) -> int:
    """Linear(E, d_ff) and Linear(d_ff, E), with biases; SwiGLU has a second E x d_ff matrix (up)."""
    up = E * d_ff + d_ff * bias if swiglu else 0
    return E * d_ff + d_ff * bias + d_ff * E + E * bias + up


# Multi-head latent attention's parts (core.latent_attention), by weight, as the parameter counts break it down.
LATENT_PARTS = {"W_q": "attention: query", "W_dq": "attention: query", "q_norm": "attention: query",
                "W_uq": "attention: query", "W_dkv": "attention: latent and rotary key (W_dkv)",
                "kv_norm": "attention: latent norm", "W_ukv": "attention: K and V back from the latent (W_ukv)",
                "W_o": "attention: output (W_o)"}


def latent_attention_params(cfg: TransformerConfig) -> dict[str, int]:
    """One latent attention's parameters by part (LATENT_PARTS), as core.latent_attention builds it: the query
    (uncompressed E·nhead·d_qk, or W_dq, its norm and W_uq), W_dkv, the latent's norm, W_ukv and W_o."""
    E, H, b, d_c, d_q = cfg.E, cfg.nhead, int(cfg.bias), cfg.kv_lora_rank, cfg.q_lora_rank
    query = H * cfg.qk_head_dim * (d_q if d_q else E) + (E * d_q + d_q * b + d_q if d_q else 0)
    return {"attention: query": query,
            "attention: latent and rotary key (W_dkv)": (E + b) * (d_c + cfg.rope_head_dim),
            "attention: latent norm": d_c,
            "attention: K and V back from the latent (W_ukv)": d_c * H * (cfg.nope_head_dim + cfg.v_head_dim),
            "attention: output (W_o)": H * cfg.v_head_dim * E + E * b}


def layernorm_params(E: int) -> int:
    """A LayerNorm's gain and bias."""
    return 2 * E


def norm_params(cfg: TransformerConfig) -> int:
    """One norm: LayerNorm's gain and bias (no bias when ``bias`` is off), RMSNorm's gain alone."""
    return cfg.E if cfg.norm == "rmsnorm" or not cfg.bias else 2 * cfg.E


def param_counts(cfg: TransformerConfig) -> dict[str, int]:
    """Parameters per component and in total, counting a tied matrix once (formulas: ``param_formulas``)."""
    E, V, L = cfg.E, cfg.vocab_size, cfg.layers
    attn = attention_params(E, cfg.nhead_kv * cfg.d_k, cfg.bias, cfg.nhead * cfg.d_k) + 2 * cfg.d_k * cfg.qk_norm
    ffn = ffn_params(E, cfg.d_ff, cfg.activation == "swiglu", cfg.bias)
    norm, final = norm_params(cfg), norm_params(cfg) if cfg.norm_first else 0
    positions = cfg.max_len * E if cfg.positional == "learned" else 0
    if cfg.positional == "relative":  # T5: one (relative_buckets, nhead) table per stack
        positions = (2 if cfg.arch == "encoder-decoder" else 1) * cfg.relative_buckets * cfg.nhead
    if cfg.arch != "encoder-decoder":
        attention = ({part: L * n for part, n in latent_attention_params(cfg).items()} if cfg.attention == "mla"
                     else {"self-attention": L * attn})
        counts = {"token embeddings": V * E, "positional table": positions, **attention,
                  "FFN": L * ffn, "norms": L * 2 * norm + final, "output layer": 0 if cfg.tie_embeddings else E * V}
        if cfg.moe:  # the dense FFN stays in the first_dense_layers only
            counts |= {"FFN": cfg.first_dense_layers * ffn} | moe_params(cfg)
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


# --- Mixture of experts: parameters, and the ones a token's pass touches ---
def moe_layers(cfg: TransformerConfig) -> int:
    """Layers with experts: all but the first_dense_layers (none for a dense model)."""
    return cfg.layers - cfg.first_dense_layers if cfg.moe else 0


def moe_params(cfg: TransformerConfig) -> dict[str, int]:
    """The routed experts, the shared experts (one FFN n_shared_experts · d_ff_expert wide) and the routers."""
    swiglu, L = cfg.activation == "swiglu", moe_layers(cfg)
    return {"experts": L * cfg.n_experts * ffn_params(cfg.E, cfg.d_ff_expert, swiglu, cfg.bias),
            "shared experts": L * ffn_params(cfg.E, cfg.n_shared_experts * cfg.d_ff_expert, swiglu, cfg.bias)
            if cfg.n_shared_experts else 0,
            "router": L * cfg.E * cfg.n_experts}


def active_params(cfg: TransformerConfig) -> int:
    """Parameters one token's pass touches: the total less the routed experts it skips (it runs top_k of
    n_experts in each layer with experts); a dense model's whole total."""
    skipped = moe_layers(cfg) * (cfg.n_experts - (cfg.top_k or 0)) * ffn_params(
        cfg.E, cfg.d_ff_expert or 0, cfg.activation == "swiglu", cfg.bias)
    return param_counts(cfg)["total"] - skipped
# --- end of the MoE block ---


def param_formulas(cfg: TransformerConfig) -> dict[str, str]:
    """Each component's count as a formula in the learner's notation, keyed as ``param_counts`` is."""
    b = " + " if cfg.bias else ""
    kv = "nhead_kv·d_k"
    attn = f"2(E² + E·{kv})" + (f" + 2E + 2{kv}" if cfg.bias else "")
    if cfg.nhead * cfg.d_k != cfg.E:  # head_dim apart from E / nhead: W^Q and W^O are E x nhead·d_k
        attn = f"2E·nhead·d_k + 2E·{kv}" + (f" + nhead·d_k + E + 2{kv}" if cfg.bias else "")
    attn += " + 2d_k" if cfg.qk_norm else ""
    ffn = ("3E·d_ff" if cfg.activation == "swiglu" else "2E·d_ff") + (
        (" + 2d_ff + E" if cfg.activation == "swiglu" else " + d_ff + E") if cfg.bias else "")
    norm = "E" if cfg.norm == "rmsnorm" or not cfg.bias else "2E"
    final = f" + {norm}" if cfg.norm_first else ""
    positions = "max_len·E" if cfg.positional == "learned" else "0"
    if cfg.positional == "relative":
        positions = ("2·" if cfg.arch == "encoder-decoder" else "") + "relative_buckets·nhead"
    if cfg.arch != "encoder-decoder":
        attention = (latent_attention_formulas(cfg) if cfg.attention == "mla"
                     else {"self-attention": f"layers·({attn})"})
        out = {"token embeddings": "vocab_size·E", "positional table": positions, **attention,
               "FFN": f"layers·({ffn})", "norms": f"layers·2·{norm}{final}",
               "output layer": "0 (tied)" if cfg.tie_embeddings else "E·vocab_size"}
        if cfg.moe:
            expert = ("3E·d_ff_expert" if cfg.activation == "swiglu" else "2E·d_ff_expert") + (
                " + biases" if cfg.bias else "")
            moe = "(layers − first_dense_layers)"
            out |= {"FFN": f"first_dense_layers·({ffn})", "experts": f"{moe}·n_experts·({expert})",
                    "shared experts": f"{moe}·({expert.replace('d_ff_expert', 'n_shared_experts·d_ff_expert')})"
                    if cfg.n_shared_experts else "0", "router": f"{moe}·E·n_experts"}
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


def latent_attention_formulas(cfg: TransformerConfig) -> dict[str, str]:
    """latent_attention_params's parts as formulas, each for all layers (d_qk = nope_head_dim + rope_head_dim)."""
    b = cfg.bias
    query = ("q_lora_rank·(E + nhead·d_qk + 1)" + (" + q_lora_rank" if b else "") if cfg.q_lora_rank
             else "E·nhead·d_qk")
    return {"attention: query": f"layers·({query})",
            "attention: latent and rotary key (W_dkv)": "layers·(E" + (" + 1" if b else "")
            + ")·(kv_lora_rank + rope_head_dim)",
            "attention: latent norm": "layers·kv_lora_rank",
            "attention: K and V back from the latent (W_ukv)":
                "layers·kv_lora_rank·nhead·(nope_head_dim + v_head_dim)",
            "attention: output (W_o)": "layers·(nhead·v_head_dim·E" + (" + E)" if b else ")")}


FP16_BYTES = 2


def kv_numbers_per_token(cfg: TransformerConfig, nhead_kv: int | None = None) -> int:
    """Numbers one layer caches per token: 2 · nhead_kv · d_k (K and V), or latent attention's kv_lora_rank +
    rope_head_dim (the latent and the rotary key); ``nhead_kv=cfg.nhead`` gives multi-head attention's count,
    which for latent attention is every head's made-back K and V, nhead · (d_qk + v_head_dim)."""
    if cfg.attention == "mla":
        if nhead_kv is not None:
            return nhead_kv * (cfg.qk_head_dim + cfg.v_head_dim)
        return cfg.kv_lora_rank + cfg.rope_head_dim
    return 2 * (cfg.nhead_kv if nhead_kv is None else nhead_kv) * cfg.d_k


def kv_cache_bytes(cfg: TransformerConfig, G: int = 0, bytes_per_number: int = FLOAT_BYTES,
                   nhead_kv: int | None = None) -> int:
    """2 · layers · N · nhead_kv · (M + G) · d_k · bytes: K and V of every layer, every position so far
    (core.kv_cache); a windowed layer holds at most ``window`` positions; latent attention keeps layers · N · (M + G)
    · (kv_lora_rank + rope_head_dim) numbers. ``nhead_kv=cfg.nhead`` gives multi-head attention's figure for the
    same model."""
    held = sum(min(cfg.M + G, cfg.window) if cfg.windowed(i) else cfg.M + G for i in range(cfg.layers))
    return held * cfg.N * kv_numbers_per_token(cfg, nhead_kv) * bytes_per_number


def kv_cache_per_token(cfg: TransformerConfig, bytes_per_number: int = FLOAT_BYTES) -> int:
    """What one more position of one sequence adds to the cache, 2 · layers · nhead_kv · d_k numbers (latent
    attention's layers · (kv_lora_rank + rope_head_dim)), while no window is full yet (a full window's layer then
    drops a position for each one it takes)."""
    return cfg.layers * kv_numbers_per_token(cfg) * bytes_per_number


def kv_cache_shape(cfg: TransformerConfig, G: int = 0) -> tuple[int, ...]:
    """The stacked cache's shape after G new tokens, no window (core.trace.stacked_cache)."""
    if cfg.attention == "mla":
        return (cfg.layers, cfg.N, cfg.M + G, cfg.kv_lora_rank + cfg.rope_head_dim)
    return (cfg.layers, 2, cfg.N, cfg.nhead_kv, cfg.M + G, cfg.d_k)


def kv_cache_summary(cfg: TransformerConfig) -> dict[str, object]:
    """The prompt's cache as ``python -m core --json`` reports it: its shape and bytes (float32, as traced;
    fp16 beside it), a token's bytes, and multi-head attention's float32 figure for the same sizes. With a
    window, ``shape`` is the windowed layers' stack and ``shape_global`` the full layers'."""
    out: dict[str, object] = {"shape": list(kv_cache_shape(cfg))}
    if cfg.window:
        windowed = sum(cfg.windowed(i) for i in range(cfg.layers))
        out = {"shape": [windowed, 2, cfg.N, cfg.nhead_kv, min(cfg.M, cfg.window), cfg.d_k]}
        if windowed < cfg.layers:
            out["shape_global"] = [cfg.layers - windowed, 2, cfg.N, cfg.nhead_kv, cfg.M, cfg.d_k]
    return out | {"bytes": kv_cache_bytes(cfg), "bytes_fp16": kv_cache_bytes(cfg, bytes_per_number=FP16_BYTES),
                  "bytes_mha": kv_cache_bytes(cfg, nhead_kv=cfg.nhead), "bytes_per_token": kv_cache_per_token(cfg),
                  "bytes_per_token_fp16": kv_cache_per_token(cfg, FP16_BYTES)}


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
        meta device (core.trace) and that the pages ask before tracing (ui.compute.traces)."""
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


def _attention_floats(cfg: TransformerConfig) -> int:
    """One stack's layer-0 self-attention tensors a trace records, maps aside: q, k, v, heads, concat and out
    (each N·M·E for multi-head attention); latent attention's own widths, with its latent, rotary key and
    compressed query."""
    N, M, E = cfg.N, cfg.M, cfg.E
    if cfg.attention != "mla":
        return N * E * 6 * M
    per_head = 2 * cfg.qk_head_dim + 3 * cfg.v_head_dim  # q, k; v, heads, concat
    return N * M * (cfg.nhead * per_head + E + cfg.kv_lora_rank + cfg.rope_head_dim + cfg.q_lora_rank)


def _floats(cfg: TransformerConfig) -> _Floats:
    N, M, T, E, H, F = cfg.N, cfg.M, cfg.M_target or 0, cfg.E, cfg.nhead, cfg.d_ff
    F = 3 * F if cfg.activation == "swiglu" else F  # gate and up are kept beside the hidden layer
    # The embedding and the summed input are one tensor when no table is added (RoPE, T5's buckets, none).
    sums = 2 if cfg.positional in ("sinusoidal", "learned") else 1
    if cfg.arch != "encoder-decoder":  # one stack over M positions, counted as the encoder's
        table = 0 if cfg.positional in ("none", "relative") else (
            cfg.max_len if cfg.positional == "learned" else M) * E
        if cfg.attention == "mla":  # RoPE's table is rope_head_dim wide
            table = M * cfg.rope_head_dim
        return _Floats(enc_layer=_attention_floats(cfg) + N * M * (3 * E + F), dec_layer=0, embed=sums * N * M * E + table,
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


def moe_floats(cfg: TransformerConfig) -> int:
    """What the first layer with experts keeps beyond a dense layer's, in floats (int64 ids count as two), with
    every expert's T_e at the even share; and the wider concatenation a head_dim over E / nhead makes."""
    N, M, E = cfg.N, cfg.M, cfg.E
    wider = max(0, cfg.nhead * cfg.d_k - E) * 3 * N * M  # q, heads and concat are nhead·d_k wide
    if not cfg.moe:
        return wider
    T_e = -(-N * M * cfg.top_k // cfg.n_experts)
    width = 3 * cfg.d_ff_expert if cfg.activation == "swiglu" else cfg.d_ff_expert
    shared = N * M * (E + width * cfg.n_shared_experts) if cfg.n_shared_experts else 0
    routing = N * M * (cfg.n_experts + 3 * cfg.top_k) + 2 * cfg.n_experts  # logits, weights, ids, counts
    return wider + routing + T_e * (2 * E + width) + shared + N * M * E
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
    linear_floats += moe_floats(cfg)
    # Layer 0's W^Q, W^K, W^V, all heads: views that keep its three (E, E) weights alive; latent attention has none.
    head_weights = 0 if cfg.attention == "mla" else 3 * E * E
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
    "Llama-3-8B": (8_030_261_248, "8B"), "Mistral-7B": (7_241_732_096, "7B"),
    "Mixtral-8x7B": (46_702_792_704, "8x7B"), "Qwen3-30B-A3B": (30_532_122_624, "30B"),
    "DeepSeek-V2-Lite": (15_706_484_224, "16B"), "DeepSeek-V3": (671_026_404_352, "671B"),
}
# The fields a parameter count depends on: a real model's with another N, M or seed is the same model.
_COUNTED = ("arch", "E", "nhead", "nhead_kv", "layers", "d_ff", "vocab_size", "positional", "tie_embeddings",
            "norm", "norm_first", "activation", "bias", "n_experts", "top_k", "n_shared_experts", "d_ff_expert",
            "first_dense_layers", "head_dim", "qk_norm", "attention", "kv_lora_rank", "q_lora_rank", "rope_head_dim",
            "nope_head_dim", "v_head_dim", "relative_buckets")


def real_model(cfg: TransformerConfig) -> str | None:
    """The real model (core.config.REAL_MODELS) whose parts and widths this config has, if any."""
    for name, real in REAL_MODELS.items():
        same_table = cfg.positional != "learned" or cfg.max_len == real.max_len
        if same_table and all(getattr(cfg, f) == getattr(real, f) for f in _COUNTED):
            return name
    return None
