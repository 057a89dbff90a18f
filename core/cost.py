"""What a model costs: FLOPs, inference memory, a decode-speed bound and training memory.

Every figure is a ``Figure``: its value, its formula in the learner's notation, and the same formula with
the config's numbers filled in, so a page can show all three and a test can hold the value exact.
The live checks (``counted_flops``, ``saved_activation_bytes``) run the model itself, so a formula here
is never trusted without the pass it describes.

Legend: s sequence length (M), b batch (N), h embedding size (E), a heads (nhead), L layers, V vocab_size,
P parameters (P_active: the ones one token's pass touches), D training tokens.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

from .config import TransformerConfig
from .memory import estimate, kv_numbers_per_token
from .model import Transformer, generate_square_subsequent_mask
from .trace import active_count, make_batch, run_pass

GPU_FILE = Path(__file__).parent / "data" / "gpus.csv"
BYTES_PER_NUMBER = {"fp32": 4.0, "bf16": 2.0, "int8": 1.0, "int4": 0.5}
CHINCHILLA_TOKENS_PER_PARAM = 20
# Bytes a parameter costs in training: weights + gradients + optimizer state (Transformer Math 101).
OPTIMIZERS = {
    "mixed-precision Adam": (2, 2, 12),  # bf16 weights and grads; fp32 master copy, momentum, variance
    "mixed-precision 8-bit Adam": (2, 2, 6),  # fp32 master copy; 8-bit momentum and variance
    "fp32 Adam": (4, 4, 8),  # no master copy: the weights are already fp32
}
RECOMPUTE = ("none", "selective", "full")


@dataclass(frozen=True)
class Figure:
    """One cost: its value, its formula, and the formula with this config's numbers in it."""

    name: str
    value: float
    formula: str
    filled: str
    unit: str


@dataclass(frozen=True)
class GPU:
    """One accelerator's datasheet figures."""

    name: str
    memory_bytes: int
    bandwidth: float  # bytes per second
    bf16_flops: float  # dense peak, FLOPs per second
    source: str


def gpus() -> list[GPU]:
    """The GPUs of ``core/data/gpus.csv``, each with the datasheet it comes from."""
    with GPU_FILE.open(newline="", encoding="utf-8") as f:
        return [GPU(r["name"], int(float(r["memory_GB"]) * 10**9), float(r["bandwidth_GB_s"]) * 10**9,
                    float(r["bf16_dense_TFLOPS"]) * 10**12, r["source"]) for r in csv.DictReader(f)]


def gpu(name: str) -> GPU:
    """The GPU of that name; a ValueError lists the names there are."""
    table = {g.name: g for g in gpus()}
    if name not in table:
        raise ValueError(f"gpu={name!r} is not in the table; choose one of {', '.join(table)}")
    return table[name]


# ---- parameters ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamCount:
    """Total parameters, and the active ones: all but the routed experts a token skips."""

    total: int
    active: int
    embedding: int  # looked up, never multiplied: the token table (when not tied to the output) and positions


def param_count(cfg: TransformerConfig) -> ParamCount:
    """Counted from the model built on the meta device, so nothing is allocated."""
    model = Transformer.from_config(cfg, device="meta")
    total = sum(p.numel() for p in model.parameters())
    active = active_count(model)
    lookups = {id(model.src_embed.lookup.weight), id(model.tgt_embed.lookup.weight)} - {id(model.generator.weight)}
    embedding = sum(p.numel() for p in model.parameters() if id(p) in lookups)
    if model.positional.table is not None:
        embedding += model.positional.table.numel()
    return ParamCount(total=total, active=active, embedding=embedding)


# ---- FLOPs -------------------------------------------------------------------------------------------------


def _attention_projection_width(cfg: TransformerConfig) -> tuple[int, str]:
    """Weights one token multiplies through in one attention layer, and their formula."""
    E, H = cfg.E, cfg.nhead
    if cfg.attention == "mla":
        d_c, d_q, qk, v = cfg.kv_lora_rank, cfg.q_lora_rank, cfg.qk_head_dim, cfg.v_head_dim
        query = E * d_q + d_q * H * qk if d_q else E * H * qk
        width = query + E * (d_c + cfg.rope_head_dim) + d_c * H * (cfg.nope_head_dim + v) + H * v * E
        q_formula = "E·q_lora_rank + q_lora_rank·nhead·d_qk" if d_q else "E·nhead·d_qk"
        return width, (f"{q_formula} + E·(kv_lora_rank + rope_head_dim) + kv_lora_rank·nhead·(nope_head_dim + "
                       "v_head_dim) + nhead·v_head_dim·E")
    return 2 * E * H * cfg.d_k + 2 * E * cfg.nhead_kv * cfg.d_k, "2E·nhead·d_k + 2E·nhead_kv·d_k"


def _scores_width(cfg: TransformerConfig) -> tuple[int, str]:
    """Per key, one head's q·k and its share of the weighted sum of values: d_qk + d_v multiplies."""
    if cfg.attention == "mla":
        return cfg.nhead * (cfg.qk_head_dim + cfg.v_head_dim), "nhead·(d_qk + v_head_dim)"
    return 2 * cfg.nhead * cfg.d_k, "2·nhead·d_k"


def _ffn_width(cfg: TransformerConfig) -> tuple[int, str]:
    """Weights one token multiplies through in all the FFNs of one stack, and their formula: two matrices, three
    for SwiGLU; in a layer with experts the router, its top_k experts and the shared ones."""
    k = 3 if cfg.activation == "swiglu" else 2
    if not cfg.moe:
        return cfg.layers * k * cfg.E * cfg.d_ff, f"layers·{k}E·d_ff"
    moe_layers = cfg.layers - cfg.first_dense_layers
    per_moe = cfg.E * cfg.n_experts + (cfg.top_k + cfg.n_shared_experts) * k * cfg.E * cfg.d_ff_expert
    dense = f"first_dense_layers·{k}E·d_ff + " if cfg.first_dense_layers else ""
    return (cfg.first_dense_layers * k * cfg.E * cfg.d_ff + moe_layers * per_moe,
            f"{dense}(layers − first_dense_layers)·(E·n_experts + (top_k + n_shared_experts)·{k}E·d_ff_expert)")


def flops_per_token(cfg: TransformerConfig) -> dict[str, Figure]:
    """Forward FLOPs for one token of a single stack at context M, by component, and the total.

    A multiply and an add are two FLOPs, so a token through a weight matrix costs 2 FLOPs a weight. The
    attention term counts q·k for every key and the weighted sum of the values: 2·2·layers·M·nhead·d_k.
    Our model computes every score and masks the ones it blocks, so a window or the causal mask saves
    nothing here; a kernel that skips blocked pairs would. For the encoder-decoder the figure is one source
    token through the encoder plus one target token through the decoder (cross-attention over M).
    """
    E, V, L, M = cfg.E, cfg.vocab_size, cfg.layers, cfg.M
    attn, attn_f = _attention_projection_width(cfg)
    ffn, ffn_f = _ffn_width(cfg)
    sw, sw_f = _scores_width(cfg)
    figures: dict[str, Figure] = {}

    def add(name: str, value: int, formula: str, filled: str) -> None:
        figures[name] = Figure(name, value, formula, filled, "FLOPs")

    if cfg.arch == "encoder-decoder":
        T = cfg.M_target
        add("attention projections", 2 * 3 * L * attn, f"2·3·layers·({attn_f})", f"2·3·{L}·{attn:,}")
        add("attention scores and sums", 2 * L * (M + T + M) * sw,
            f"2·layers·(M + M_target + M)·{sw_f}", f"2·{L}·({M} + {T} + {M})·{sw}")
        add("FFN", 2 * 2 * ffn, f"2·2·({ffn_f})", f"2·2·{ffn:,}")
    else:
        add("attention projections", 2 * L * attn, f"2·layers·({attn_f})", f"2·{L}·{attn:,}")
        add("attention scores and sums", 2 * L * M * sw, f"2·layers·M·{sw_f}", f"2·{L}·{M}·{sw}")
        add("experts and router" if cfg.moe else "FFN", 2 * ffn, f"2·({ffn_f})", f"2·{ffn:,}")
    add("output layer", 2 * E * V, "2·E·vocab_size", f"2·{E}·{V:,}")
    add("embedding lookup", 0, "0 (a lookup multiplies nothing)", "0")
    total = sum(f.value for f in figures.values())
    figures["total"] = Figure("total", total, " + ".join(figures), " + ".join(f"{f.value:,}" for f in figures.values()),
                              "FLOPs")
    return figures


def flops_rule_of_thumb(cfg: TransformerConfig, params: ParamCount | None = None) -> Figure:
    """The usual estimate: 2 FLOPs per active parameter plus the attention term, per token. An encoder-decoder's
    token is a source and a target token, as in flops_per_token: its attention term reads M keys in the encoder's
    self-attention and the cross-attention, M_target in the decoder's self-attention."""
    p = params or param_count(cfg)
    sw, sw_f = _scores_width(cfg)
    if cfg.arch == "encoder-decoder":
        keys, keys_f = 2 * cfg.M + cfg.M_target, "(M + M_target + M)"
        keys_filled = f"({cfg.M} + {cfg.M_target} + {cfg.M})"
    else:
        keys, keys_f, keys_filled = cfg.M, "M", f"{cfg.M}"
    value = 2 * p.active + 2 * cfg.layers * keys * sw
    return Figure("rule of thumb", value, f"2·P_active + 2·layers·{keys_f}·{sw_f}",
                  f"2·{p.active:,} + 2·{cfg.layers}·{keys_filled}·{sw}", "FLOPs")


def pass_flops(cfg: TransformerConfig) -> Figure:
    """Matrix-multiply FLOPs of one whole forward pass of the trace's batch, as the live check counts them."""
    f = flops_per_token(cfg)
    if cfg.arch != "encoder-decoder":
        tokens = cfg.N * cfg.M
        value = tokens * f["total"].value
        return Figure("forward pass", value, "N·M·(FLOPs per token)", f"{cfg.N}·{cfg.M}·{f['total'].value:,}", "FLOPs")
    E, L, M, T = cfg.E, cfg.layers, cfg.M, cfg.M_target
    attn, _ = _attention_projection_width(cfg)
    ffn, _ = _ffn_width(cfg)
    sw, _ = _scores_width(cfg)
    kv = 2 * E * cfg.nhead_kv * cfg.d_k  # cross-attention's W_k and W_v read the memory: M tokens, not M_target
    source = cfg.N * M * (2 * (L * attn + ffn) + 2 * L * M * sw + 2 * L * kv)
    target = cfg.N * T * (2 * (L * (2 * attn - kv) + ffn) + 2 * L * (T + M) * sw + 2 * E * cfg.vocab_size)
    return Figure("forward pass", source + target,
                  "N·M·(2·(layers·attention + FFN + layers·cross K,V) + 2·layers·M·scores) + "
                  "N·M_target·(2·(layers·(2·attention − cross K,V) + FFN) + 2·layers·(M_target + M)·scores "
                  "+ 2·E·vocab_size)", f"{source:,} + {target:,}", "FLOPs")


def counted_flops(cfg: TransformerConfig, device: str | None = None) -> int:
    """Matrix-multiply FLOPs PyTorch's FlopCounterMode counts in the model's own pass.

    A large model runs on the meta device, which allocates nothing; there each expert is handed the even
    share of tokens rounded up (core.experts), so a mixture of experts may count a few rows more than
    a real pass, where the router hands out exactly top_k · N · M rows.
    """
    device = device or ("cpu" if _small_enough(cfg) else "meta")
    model = Transformer.from_config(cfg, device=device).requires_grad_(False)  # a forward pass only
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        run_pass(model, cfg, device, {}, None)
    return int(counter.get_total_flops())


def uncounted_flops(cfg: TransformerConfig, params: ParamCount | None = None) -> Figure:
    """What the rule of thumb counts that no matrix multiply does: the lookups, norms and biases."""
    p = params or param_count(cfg)
    per_token = flops_per_token(cfg)
    matrices = (per_token["total"].value - per_token["attention scores and sums"].value) // 2
    rest = p.active - matrices
    return Figure("not multiplied", 2 * rest, "2·(P_active − weights in matrix multiplies)",
                  f"2·({p.active:,} − {matrices:,})", "FLOPs")


# ---- training compute --------------------------------------------------------------------------------------


def training_flops(active_params: int, tokens: float) -> Figure:
    """6·P·D: forward 2, backward 4 FLOPs per parameter and token."""
    return Figure("training compute", 6 * active_params * tokens, "6·P_active·D",
                  f"6·{active_params:,}·{tokens:.4g}", "FLOPs")


def chinchilla_tokens(active_params: int) -> Figure:
    """Compute-optimal training tokens, about 20 per parameter (Hoffmann et al., 2022)."""
    return Figure("compute-optimal tokens", CHINCHILLA_TOKENS_PER_PARAM * active_params, "20·P_active",
                  f"20·{active_params:,}", "tokens")


def gpu_hours(flops: float, peak_flops: float, mfu: float) -> Figure:
    """Hours of one GPU at ``mfu`` of its peak."""
    if not 0 < mfu <= 1:
        raise ValueError(f"mfu={mfu} must be a fraction above 0 and at most 1, such as 0.4")
    return Figure("GPU-hours", flops / (peak_flops * mfu) / 3600, "C / (peak · MFU) / 3600",
                  f"{flops:.4g} / ({peak_flops:.4g} · {mfu}) / 3600", "GPU-hours")


# ---- inference memory ------------------------------------------------------------------------------------


def weight_bytes(params: int, precision: str) -> Figure:
    """Every parameter stored at ``precision`` (fp32, bf16, int8 or int4)."""
    if precision not in BYTES_PER_NUMBER:
        raise ValueError(f"precision={precision!r} must be one of {', '.join(BYTES_PER_NUMBER)}")
    per = BYTES_PER_NUMBER[precision]
    return Figure(f"weights, {precision}", params * per, f"P·{per:g}", f"{params:,}·{per:g}", "bytes")


def kv_cache_bytes(cfg: TransformerConfig, context: int, batch: int, bytes_per_number: float = 2) -> Figure:
    """What every layer keeps for every position of the context: K and V, 2·nhead_kv·d_k numbers a token, or
    latent attention's latent and rotary key, kv_lora_rank + rope_head_dim. A windowed layer keeps at most
    ``window`` positions. The encoder-decoder's decoder also keeps its cross-attention's K and V over the M
    source positions; an encoder-only model generates nothing, so it keeps no cache.
    """
    L, per = cfg.layers, bytes_per_number
    if cfg.arch == "encoder-only":
        return Figure("KV cache", 0, "0: an encoder-only model reads its input once and generates nothing", "0",
                      "bytes")
    numbers = kv_numbers_per_token(cfg)
    if cfg.attention == "mla":
        width, width_f = numbers, "(kv_lora_rank + rope_head_dim)"
        width_filled = f"({cfg.kv_lora_rank} + {cfg.rope_head_dim})"
    else:
        width, width_f = numbers, "2·nhead_kv·d_k"
        width_filled = f"2·{cfg.nhead_kv}·{cfg.d_k}"
    if cfg.window:
        windowed = sum(cfg.windowed(i) for i in range(L))
        held = windowed * min(context, cfg.window) + (L - windowed) * context
        positions_f, positions = "(windowed layers·min(context, window) + full layers·context)", \
            f"({windowed}·{min(context, cfg.window):,} + {L - windowed}·{context:,})"
    else:
        held, positions_f, positions = L * context, "layers·context", f"{L}·{context:,}"
    value = held * batch * width * per
    formula, filled = f"{positions_f}·b·{width_f}·bytes", f"{positions}·{batch}·{width_filled}·{per:g}"
    if cfg.arch == "encoder-decoder":
        cross = L * batch * cfg.M * width * per
        value += cross
        formula += f" + layers·b·M·{width_f}·bytes"
        filled += f" + {L}·{batch}·{cfg.M:,}·{width_filled}·{per:g}"
    return Figure("KV cache", value, formula, filled, "bytes")


def peak_activation_bytes(cfg: TransformerConfig, context: int, batch: int, bytes_per_number: float = 2) -> Figure:
    """An inference pass's largest moment: the residual stream beside the widest thing one layer holds.

    Spelled-out attention holds the scores and the weights, 2·b·nhead·s² numbers; the FFN its hidden
    layer (two of them for SwiGLU); the output layer the logits, b·s·vocab_size.
    """
    s, b = context, batch
    hidden = (2 if cfg.activation == "swiglu" else 1) * b * s * cfg.d_ff
    widest = max(2 * b * cfg.nhead * s * s, hidden, b * s * cfg.vocab_size)
    value = (b * s * cfg.E + widest) * bytes_per_number
    return Figure("peak activations", value, "(b·s·E + max(2·b·nhead·s², FFN hidden, b·s·vocab_size))·bytes",
                  f"({b}·{s:,}·{cfg.E} + {widest:,})·{bytes_per_number:g}", "bytes")


# ---- decode speed bound ----------------------------------------------------------------------------------


def decode_bound(active_weight_bytes: float, cache_bytes_per_sequence: float, batch: int,
                 bandwidth: float) -> Figure:
    """Tokens per second can be at most the bandwidth over the bytes one step reads: every active weight once,
    and each sequence's cache."""
    step_bytes = active_weight_bytes + batch * cache_bytes_per_sequence
    return Figure("decode bound", batch * bandwidth / step_bytes, "b · bandwidth / (weights + b · cache)",
                  f"{batch} · {bandwidth:.4g} / ({active_weight_bytes:.4g} + {batch} · {cache_bytes_per_sequence:.4g})",
                  "tokens/s")


def prefill_bound(flops_per_tok: float, peak_flops: float, mfu: float = 1.0) -> Figure:
    """Prefill is compute-bound: at most peak · MFU / (FLOPs per token) tokens a second."""
    return Figure("prefill bound", peak_flops * mfu / flops_per_tok, "peak · MFU / (FLOPs per token)",
                  f"{peak_flops:.4g} · {mfu} / {flops_per_tok:.4g}", "tokens/s")


def crossover_batch(active_weight_bytes: float, cache_bytes_per_sequence: float, flops_per_tok: float,
                    bandwidth: float, peak_flops: float) -> Figure:
    """The batch at which a decode step stops waiting on memory and starts waiting on compute.

    Reading takes (W + b·c)/bandwidth, computing b·F/peak; they meet at b = W / (F·bandwidth/peak − c).
    When the cache per sequence reads longer than its compute takes, no batch gets there (infinity).
    """
    denominator = flops_per_tok * bandwidth / peak_flops - cache_bytes_per_sequence
    value = active_weight_bytes / denominator if denominator > 0 else float("inf")
    return Figure("crossover batch", value, "W / (F · bandwidth / peak − c)",
                  f"{active_weight_bytes:.4g} / ({flops_per_tok:.4g} · {bandwidth:.4g} / {peak_flops:.4g} − "
                  f"{cache_bytes_per_sequence:.4g})", "sequences")


# ---- training memory -------------------------------------------------------------------------------------


def training_state_bytes(params: int, optimizer: str = "mixed-precision Adam", zero_stage: int = 0,
                         data_parallel: int = 1) -> Figure:
    """Weights, gradients and optimizer state per GPU; ZeRO stage 1 shards the optimizer state over the data-
    parallel GPUs, stage 2 the gradients too, stage 3 the weights too."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer={optimizer!r} must be one of {', '.join(OPTIMIZERS)}")
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage={zero_stage} must be 0, 1, 2 or 3")
    if not isinstance(data_parallel, int) or data_parallel < 1:
        raise ValueError(f"data_parallel={data_parallel!r} must be a whole number of GPUs, at least 1")
    w, g, o = OPTIMIZERS[optimizer]
    d = data_parallel
    parts = [(w, zero_stage >= 3), (g, zero_stage >= 2), (o, zero_stage >= 1)]
    per = sum(b / d if sharded else b for b, sharded in parts)
    terms = " + ".join(f"{b}/{d}" if sharded else f"{b}" for b, sharded in parts)
    return Figure("weights, gradients, optimizer", params * per, "P·(weights + gradients + optimizer state)",
                  f"{params:,}·({terms})", "bytes")


def layer_activation_bytes(s: int, b: int, h: int, a: int, recompute: str = "none", flash: bool = False) -> Figure:
    """Activations one GPT-style layer keeps for backward in fp16 (Korthikanti et al., 2022, section 4).

    With nothing recomputed: s·b·h·(34 + 5·a·s/h) bytes; 34·s·b·h for the linear parts (11 in attention,
    19 in the MLP with d_ff = 4h and GELU, 4 in the two LayerNorms), 5·a·s²·b for the attention map
    (softmax output, its dropout mask and dropout output). Selective recomputation, and FlashAttention,
    which never stores the map, leave the 34; full recomputation keeps only the layer's input, 2·s·b·h.
    """
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute={recompute!r} must be one of {', '.join(RECOMPUTE)}")
    if recompute == "full":
        return Figure("activations per layer", 2 * s * b * h, "2·s·b·h", f"2·{s}·{b}·{h}", "bytes")
    if recompute == "selective" or flash:
        return Figure("activations per layer", 34 * s * b * h, "34·s·b·h", f"34·{s}·{b}·{h}", "bytes")
    value = s * b * h * 34 + 5 * a * s * s * b
    return Figure("activations per layer", value, "s·b·h·(34 + 5·a·s/h)", f"{s}·{b}·{h}·(34 + 5·{a}·{s}/{h})", "bytes")


# ---- live check of activations ---------------------------------------------------------------------------

# The families whose saved bytes ``expected_saved_bytes`` spells out exactly; others are measured only.
EXACT_SAVED_POSITIONS = ("sinusoidal", "learned", "none")


def _forward_with_grad(model: Transformer, cfg: TransformerConfig) -> torch.Tensor:
    """The model's forward on the trace's batch with autograd on, unrecorded: what a training step runs."""
    src, tgt = make_batch(cfg)  # (N, M), (N, M_target)
    if cfg.arch == "decoder-only":
        return model(None, src, tgt_mask=generate_square_subsequent_mask(cfg.M))  # (N, M, vocab_size)
    padding = model.generate_key_padding_mask(src)  # (N, M)
    if cfg.arch == "encoder-only":
        return model(src, src_key_padding_mask=padding)  # (N, M, vocab_size)
    return model(src, tgt, tgt_mask=generate_square_subsequent_mask(cfg.M_target), src_key_padding_mask=padding,
                 memory_key_padding_mask=padding)  # (N, M_target, vocab_size)


def saved_activation_bytes(cfg: TransformerConfig) -> int:
    """Bytes autograd keeps for backward in one real forward pass, each storage once, the weights left out.

    Measured with ``torch.autograd.graph.saved_tensors_hooks``: every tensor an operation saves passes
    through the hook, and several operations may save one tensor (a norm's output feeds W_q, W_k, W_v).
    """
    model = Transformer.from_config(cfg)
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    kept: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in weights:
            kept[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        _forward_with_grad(model, cfg)
    return sum(kept.values())


def exact_saved_count(cfg: TransformerConfig) -> bool:
    """Whether ``expected_saved_bytes`` spells this model out: the other parts save tensors of their own."""
    return (cfg.arch != "encoder-decoder" and cfg.positional in EXACT_SAVED_POSITIONS and not cfg.moe
            and cfg.attention == "mha" and not cfg.window and not cfg.qk_norm)


def expected_saved_bytes(cfg: TransformerConfig) -> Figure:
    """What our spelled-out single stack keeps for backward, in float32, tensor by tensor.

    Per layer: each norm's input and statistics (LayerNorm: mean and 1/std, N·M each; RMSNorm: 1/rms and the
    normalised x); the attention's input, q, k and v (K/V heads repeated to nhead), the weights after the
    softmax (N·nhead·M², which a fused kernel never stores) and the heads joined for W_o; the FFN's input
    and its middle (ReLU keeps one N·M·d_ff tensor, GELU two, SwiGLU four). Once: the ids (int64), the
    mask (bool), the output layer's input and, for pre-norm, the final norm.
    """
    if not exact_saved_count(cfg):
        raise ValueError(f"the exact count covers dense decoder-only and encoder-only models with multi-head "
                         f"attention, no window or qk_norm, and positional in {', '.join(EXACT_SAVED_POSITIONS)}; "
                         f"arch={cfg.arch}, positional={cfg.positional} is measured only")
    N, M, E, d_ff, hd = cfg.N, cfg.M, cfg.E, cfg.d_ff, cfg.nhead * cfg.d_k
    middle = {"relu": 1, "gelu": 2, "swiglu": 4}[cfg.activation]
    norm = N * M * E + (2 * N * M if cfg.norm == "layernorm" else N * M + N * M * E)  # input + statistics
    layer = 2 * norm + N * M * E + 3 * N * M * hd + N * cfg.nhead * M * M + N * M * hd + N * M * E + middle * N * M * d_ff
    once = N * M * E + (norm if cfg.norm_first else 0)
    mask = M * M if cfg.arch == "decoder-only" else N * M  # the causal mask, or the padding mask
    value = 4 * (cfg.layers * layer + once) + 8 * N * M + mask
    return Figure("saved for backward", value,
                  "4·(layers·(2·norm + N·M·E + 4·N·M·nhead·d_k + N·nhead·M² + N·M·E + k·N·M·d_ff) + once) "
                  "+ 8·N·M + mask", f"{value:,}", "bytes")


# ---- the whole report --------------------------------------------------------------------------------------

# A real pass for the live activation check stays this small (its weights and saved tensors, float32).
LIVE_SAVED_BUDGET_BYTES = 64 * 2**20


@dataclass(frozen=True, kw_only=True)
class CostSettings:
    """The choices a cost depends on beyond the model: context, batch, hardware and training set-up."""

    context: int | None = None  # tokens of context for the KV cache and the decode bound (default M)
    batch: int | None = None  # sequences at once (default N)
    gpu: str = "NVIDIA H100 SXM 80GB"
    mfu: float = 0.4
    train_tokens: float | None = None  # D; default the compute-optimal 20 · P_active
    optimizer: str = "mixed-precision Adam"
    zero_stage: int = 0
    data_parallel: int = 1
    recompute: str = "none"
    flash: bool = False

    def __post_init__(self) -> None:
        for name in ("context", "batch"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name}={value!r} must be a whole number, at least 1")
        if self.train_tokens is not None and not self.train_tokens > 0:
            raise ValueError(f"train_tokens={self.train_tokens!r} must be above 0, such as 1.4e12")
        gpu(self.gpu)
        gpu_hours(1, 1, self.mfu)  # checks the MFU
        training_state_bytes(1, self.optimizer, self.zero_stage, self.data_parallel)
        layer_activation_bytes(1, 1, 1, 1, self.recompute)


@dataclass(frozen=True)
class CostReport:
    """Every cost figure of one config, grouped as the Cost page shows them."""

    config: TransformerConfig
    settings: CostSettings
    params: ParamCount
    compute: dict[str, Figure]
    flops_by_component: dict[str, Figure]
    inference: dict[str, Figure]
    fits: list[tuple[str, bool, float]]  # (GPU, fits, share of its memory) for weights + cache + activations
    decode: dict[str, Figure]
    training: dict[str, Figure]
    live: dict[str, int | None]

    def to_dict(self) -> dict:
        """Plain values for JSON: each figure's value, formula and filled-in formula."""
        def figures(d: dict[str, Figure]) -> dict:
            return {k: {"value": f.value, "unit": f.unit, "formula": f.formula, "filled": f.filled} for k, f in d.items()}

        return {"params": {"total": self.params.total, "active": self.params.active},
                "settings": {k: getattr(self.settings, k) for k in self.settings.__dataclass_fields__},
                "compute": figures(self.compute), "flops_by_component": figures(self.flops_by_component),
                "inference": figures(self.inference),
                "fits": [{"gpu": g, "fits": ok, "share": share} for g, ok, share in self.fits],
                "decode": figures(self.decode), "training": figures(self.training), "live": dict(self.live)}


def cost_report(cfg: TransformerConfig, settings: CostSettings | None = None, live: bool = True) -> CostReport:
    """All the figures for ``cfg``; ``live`` adds the counted FLOPs and, when small, the measured saved bytes."""
    s = settings or CostSettings()
    context, batch = s.context or cfg.M, s.batch or cfg.N
    p = param_count(cfg)
    card = gpu(s.gpu)
    per_token = flops_per_token(cfg)
    F = per_token["total"].value
    D = s.train_tokens if s.train_tokens is not None else chinchilla_tokens(p.active).value
    C = training_flops(p.active, D)
    compute = {"FLOPs per token": replace(per_token["total"], name="FLOPs per token"), "rule of thumb": flops_rule_of_thumb(cfg, p),
               "compute-optimal tokens": chinchilla_tokens(p.active), "training compute": C,
               "GPU-hours": gpu_hours(C.value, card.bf16_flops, s.mfu)}
    weights = {f"weights, {k}": weight_bytes(p.total, k) for k in BYTES_PER_NUMBER}
    cache = kv_cache_bytes(cfg, context, batch)
    peak = peak_activation_bytes(cfg, context, batch)
    need = weights["weights, bf16"].value + cache.value + peak.value
    inference = weights | {"KV cache": cache, "peak activations": peak,
                           "inference total, bf16": Figure("inference total, bf16", need,
                                                           "weights + KV cache + peak activations",
                                                           f"{weights['weights, bf16'].value:.4g} + {cache.value:.4g} + "
                                                           f"{peak.value:.4g}", "bytes")}
    fits = [(g.name, need <= g.memory_bytes, need / g.memory_bytes) for g in gpus()]
    active_bytes = p.active * BYTES_PER_NUMBER["bf16"]
    per_sequence = kv_cache_bytes(cfg, context, 1).value
    decode = {"decode bound": decode_bound(active_bytes, per_sequence, batch, card.bandwidth),
              "prefill bound": prefill_bound(F, card.bf16_flops, s.mfu),
              "crossover batch": crossover_batch(active_bytes, per_sequence, F, card.bandwidth, card.bf16_flops)}
    layer = layer_activation_bytes(context, batch, cfg.E, cfg.nhead, s.recompute, s.flash)
    states = training_state_bytes(p.total, s.optimizer, s.zero_stage, s.data_parallel)
    activations = Figure("activations, all layers", cfg.layers * layer.value, "layers · (activations per layer)",
                         f"{cfg.layers} · {layer.value:,.0f}", "bytes")
    training = {"weights, gradients, optimizer": states, "activations per layer": layer,
                "activations, all layers": activations,
                "training total per GPU": Figure("training total per GPU", states.value + activations.value,
                                                 "states + activations", f"{states.value:.4g} + {activations.value:.4g}",
                                                 "bytes")}
    checks: dict[str, int | None] = {"counted_flops": None, "formula_flops": int(pass_flops(cfg).value),
                                     "saved_bytes": None, "expected_saved_bytes": None}
    if live:
        checks["counted_flops"] = counted_flops(cfg)
        if _small_enough(cfg):
            checks["saved_bytes"] = saved_activation_bytes(cfg)
            if exact_saved_count(cfg):
                checks["expected_saved_bytes"] = int(expected_saved_bytes(cfg).value)
    return CostReport(cfg, s, p, compute, per_token, inference, fits, decode, training, checks)


def _small_enough(cfg: TransformerConfig) -> bool:
    """A real training pass's weights and saved tensors fit the live check's budget (a generous estimate)."""
    return 3 * estimate(cfg).total <= LIVE_SAVED_BUDGET_BYTES
