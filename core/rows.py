"""The 14 tensors of the first seed note, defined once, plus the extras a learner also meets; and the rows
of the one-stack families (decoder-only, encoder-only), each list defined once the same way.

The recorder keys (``hook``) name where the model records each tensor (see core.model.record);
the trace, the pages, the quizzes and the tests all read this one table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .config import MLA_FIELDS, TransformerConfig


@dataclass(frozen=True)
class RowSpec:
    """One tensor to show: where it is recorded, its formula, and what it is in plain words.

    ``head`` picks one head out of a stacked (N, nhead, L, d_k) tensor, as the note's per-head
    view does; ``None`` keeps the tensor whole.
    """

    index: int
    key: str
    name: str
    formula: str
    hook: str
    description: str
    head: int | None = None


ROWS: tuple[RowSpec, ...] = (
    RowSpec(1, "input_tokens", "input tokens", "(N, M)", "src.tokens",
            "A batch of N source sequences, M token ids each: integers below vocab_size."),
    RowSpec(2, "token_embedding", "token embedding", "(N, M, E)", "src.embed",
            "Each id looked up as a row of the vocab_size x E embedding matrix, times sqrt(E) as in the paper."),
    RowSpec(3, "positional_encoding", "positional encoding", "(M, E)", "src.pos",
            "One vector per position, the same for every sequence; broadcasting adds it across the batch."),
    RowSpec(4, "summed_embedding", "summed embedding", "(N, M, E)", "src.sum",
            "Token embedding plus positional encoding: what the first encoder layer reads."),
    RowSpec(5, "qkv_one_head", "Q, K, V of one head", "(N, M, E/nhead)", "enc.0.self_attn.q",
            "Head 0's queries (keys and values have the same shape): the input times that head's E x d_k W^Q, "
            "plus its bias.",
            head=0),
    RowSpec(6, "attention_scores", "attention weights", "(N, nhead, M, M)", "enc.0.self_attn.weights",
            "softmax(QK^T / sqrt(d_k)) for every head: row i says how much query i takes from each key. Some "
            "notes call this row the attention scores; most texts call it the weights, and so does PyTorch "
            "(nn.MultiheadAttention's attn_output_weights, though it averages them over the heads by default, "
            "average_attn_weights=True, and returns (N, L, S)); they keep 'scores' for QK^T / sqrt(d_k) before the "
            "softmax (in the extras)."),
    RowSpec(7, "head_output", "attention output of one head", "(N, M, E/nhead)", "enc.0.self_attn.heads",
            "Head 0's attention weights times its values: a weighted average of value vectors.", head=0),
    RowSpec(8, "concatenated_heads", "concatenated heads", "(N, M, E)", "enc.0.self_attn.concat",
            "All nhead outputs side by side, nhead x d_k = E wide, before the output projection W^O."),
    RowSpec(9, "ffn_input", "FFN input", "(N, M, E)", "enc.0.ffn_in",
            "LayerNorm(x + attention output): the residual sum, normalised, enters the feed-forward network."),
    RowSpec(10, "ffn_output", "FFN output", "(N, M, E)", "enc.0.ffn.out",
            "Linear(E, d_ff), ReLU, Linear(d_ff, E), per position; the ReLU is inside, none follows."),
    RowSpec(11, "encoder_output", "encoder output", "(N, M, E)", "memory",
            "The last encoder layer's output, the 'memory': the decoder's cross-attention keys and values come "
            "from it."),
    RowSpec(12, "target_embedding", "target embedding", "(N, M_target, E)", "tgt.sum",
            "The target tokens, shifted right, embedded and position-encoded: what the first decoder layer reads."),
    RowSpec(13, "decoder_output", "decoder output", "(N, M_target, E)", "dec.out",
            "The last decoder layer's output, one E-vector per target position."),
    RowSpec(14, "output_probabilities", "output probabilities", "(N, M_target, vocab_size)", "probs",
            "softmax of the final linear layer: a distribution over the vocabulary at every target position."),
)

EXTRAS: tuple[RowSpec, ...] = (
    RowSpec(0, "q_stacked", "Q, all heads stacked (SDPA layout)", "(N, nhead, M, d_k)", "enc.0.self_attn.q",
            "How the model computes Q for every head at once: one product with W_q (E x E, every head's "
            "E x d_k W^Q side by side), then a view splits E into nhead x d_k and a transpose puts the head "
            "axis before M. This is the layout PyTorch's scaled_dot_product_attention (SDPA) takes; "
            "nn.MultiheadAttention's reference path (F.multi_head_attention_forward) folds the heads into the batch "
            "instead, (N·nhead, M, d_k)."),
    RowSpec(0, "k_stacked", "K, all heads stacked", "(N, nhead, M, d_k)", "enc.0.self_attn.k",
            "Keys for every head at once."),
    RowSpec(0, "v_stacked", "V, all heads stacked", "(N, nhead, M, d_k)", "enc.0.self_attn.v",
            "Values for every head at once."),
    RowSpec(0, "heads_stacked", "attention output, all heads stacked", "(N, nhead, M, d_k)",
            "enc.0.self_attn.heads", "Every head's output before the heads are concatenated."),
    RowSpec(0, "W_Q", "W^Q of one head", "(E, d_k)", "enc.0.self_attn.W_Q", "Head 0's query projection.", head=0),
    RowSpec(0, "W_K", "W^K of one head", "(E, d_k)", "enc.0.self_attn.W_K", "Head 0's key projection.", head=0),
    RowSpec(0, "W_V", "W^V of one head", "(E, d_k)", "enc.0.self_attn.W_V", "Head 0's value projection.", head=0),
    RowSpec(0, "scores_pre_softmax", "scaled scores before softmax", "(N, nhead, M, M)", "enc.0.self_attn.scores",
            "QK^T / sqrt(d_k) after masking: blocked entries are -inf, which softmax turns into 0."),
    RowSpec(0, "ffn_hidden", "FFN hidden layer", "(N, M, d_ff)", "enc.0.ffn.hidden",
            "After Linear(E, d_ff) and ReLU: the wide middle of the feed-forward network."),
    RowSpec(0, "causal_mask", "causal mask", "(M_target, M_target)", "tgt_mask",
            "True above the diagonal: target position i may not look at positions after i. The diagonal stays "
            "visible."),
    RowSpec(0, "key_padding_mask", "key padding mask", "(N, M)", "src_key_padding_mask",
            "True where a source token is padding (id 0), so no query attends to it."),
    RowSpec(0, "decoder_self_scores", "masked self-attention weights", "(N, nhead, M_target, M_target)",
            "dec.0.self_attn.weights", "The decoder's first self-attention weights, after the softmax (as in "
            "row 6): zero above the diagonal."),
    RowSpec(0, "cross_scores", "cross-attention weights", "(N, nhead, M_target, M)", "dec.0.cross_attn.weights",
            "Cross-attention weights, after the softmax: target queries against source keys, M_target rows, "
            "M columns."),
    RowSpec(0, "target_tokens", "target tokens (shifted right)", "(N, M_target)", "tgt.tokens",
            "The decoder's input ids: a start token, then the target without its last token."),
    RowSpec(0, "logits", "logits", "(N, M_target, vocab_size)", "logits",
            "The final linear layer's output, before softmax."),
)

def _one_stack(side: str, stack: str, final: str, final_text: str, causal: str) -> tuple[RowSpec, ...]:
    """A one-stack family's rows in pass order: the ``side`` ('tgt' or 'src') embeds, ``stack`` ('dec' or 'enc')
    layer 0 is shown, ``final`` is the stack's output."""
    return (
        RowSpec(1, "input_tokens", "input tokens", "(N, M)", f"{side}.tokens",
                "A batch of N sequences, M token ids each: integers below vocab_size."),
        RowSpec(2, "token_embedding", "token embedding", "(N, M, E)", f"{side}.embed",
                "Each id looked up as a row of the vocab_size x E embedding matrix (not scaled by sqrt(E), unlike "
                "the paper)."),
        RowSpec(3, "positional_encoding", "positional table", "(M, E)", f"{side}.pos",
                "One vector per position, added to every sequence's token vectors."),
        RowSpec(4, "summed_embedding", "summed input", "(N, M, E)", f"{side}.sum",
                "What the first layer reads: the token embedding, plus the positional table if one is added."),
        RowSpec(5, "q_one_head", "Q of one head", "(N, M, d_k)", f"{stack}.0.self_attn.q",
                "Head 0's queries: the input times that head's E x d_k W^Q (turned by RoPE if used).", head=0),
        RowSpec(6, "kv_one_head", "K and V of one K/V head", "(N, M, d_k)", f"{stack}.0.self_attn.k",
                "K/V head 0's keys (its values have the same shape); with nhead_kv < nhead several query heads "
                "read this one.", head=0),
        RowSpec(7, "attention_scores", "attention weights", "(N, nhead, M, M)", f"{stack}.0.self_attn.weights",
                "softmax(QK^T / sqrt(d_k)) for every query head" + causal),
        RowSpec(8, "head_output", "attention output of one head", "(N, M, d_k)", f"{stack}.0.self_attn.heads",
                "Head 0's attention weights times its values.", head=0),
        RowSpec(9, "concatenated_heads", "concatenated heads", "(N, M, E)", f"{stack}.0.self_attn.concat",
                "All nhead outputs side by side, before the output projection W^O."),
        RowSpec(10, "ffn_input", "FFN input", "(N, M, E)", f"{stack}.0.ffn_in",
                "What enters the feed-forward network: the residual sum, normalised (pre-norm: a normalised copy)."),
        RowSpec(11, "ffn_hidden", "FFN hidden layer", "(N, M, d_ff)", f"{stack}.0.ffn.hidden",
                "The wide middle of the feed-forward network, after its activation (for SwiGLU, gate times up)."),
        RowSpec(12, "ffn_output", "FFN output", "(N, M, E)", f"{stack}.0.ffn.out",
                "Back to E wide, per position."),
        RowSpec(13, "final_output", final_text, "(N, M, E)", final,
                "The last layer's output, after the final norm when the layers are pre-norm."),
        RowSpec(14, "logits", "logits", "(N, M, vocab_size)", "logits",
                "The output layer's scores over the vocabulary at every position, before softmax."),
        RowSpec(15, "output_probabilities", "output probabilities", "(N, M, vocab_size)", "probs",
                "softmax of the logits: a distribution over the vocabulary at every position."),
    )


DECODER_ONLY_ROWS = _one_stack("tgt", "dec", "dec.out", "final norm's output",
                               ", under the causal mask: zero above the diagonal, so no position sees a later one.")
"""GPT and Llama: one causal stack; each position's logits predict the next token."""

ENCODER_ONLY_ROWS = _one_stack("src", "enc", "memory", "encoder output",
                               ": every position sees every other one (padding aside).")
"""BERT: one unmasked stack; per-token logits (a masked-language-model head)."""


def _one_stack_extras(side: str, stack: str, mask: str) -> tuple[RowSpec, ...]:
    attn = f"{stack}.0.self_attn."
    return (
        RowSpec(0, "q_stacked", "Q, all heads stacked", "(N, nhead, M, d_k)", attn + "q", "Queries of every head."),
        RowSpec(0, "k_stacked", "K, all K/V heads stacked", "(N, nhead_kv, M, d_k)", attn + "k",
                "Keys of the nhead_kv K/V heads: this is what a KV cache stores, per layer."),
        RowSpec(0, "v_stacked", "V, all K/V heads stacked", "(N, nhead_kv, M, d_k)", attn + "v",
                "Values of the nhead_kv K/V heads."),
        RowSpec(0, "kv_head_of_query", "K/V head each query head reads", "(nhead,)", attn + "kv_head",
                "Query head h reads K/V head h // (nhead / nhead_kv): each K/V head serves a group of query heads."),
        RowSpec(0, "W_Q", "W^Q of one head", "(E, d_k)", attn + "W_Q", "Head 0's query projection.", head=0),
        RowSpec(0, "W_K", "W^K of one K/V head", "(E, d_k)", attn + "W_K", "K/V head 0's key projection.", head=0),
        RowSpec(0, "W_V", "W^V of one K/V head", "(E, d_k)", attn + "W_V", "K/V head 0's value projection.", head=0),
        RowSpec(0, "scores_pre_softmax", "scaled scores before softmax", "(N, nhead, M, M)", attn + "scores",
                "QK^T / sqrt(d_k) after masking: blocked entries are -inf."),
        RowSpec(0, "causal_mask" if mask == "tgt_mask" else "key_padding_mask",
                "causal mask" if mask == "tgt_mask" else "key padding mask",
                "(M, M)" if mask == "tgt_mask" else "(N, M)", mask,
                "True where attention is blocked: above the diagonal (causal), or where a token is padding."),
    )


FAMILY_ROWS: dict[str, tuple[RowSpec, ...]] = {
    "encoder-decoder": ROWS, "decoder-only": DECODER_ONLY_ROWS, "encoder-only": ENCODER_ONLY_ROWS}
KV_CACHE = RowSpec(0, "kv_cache", "KV cache after the prompt", "(layers, 2, N, nhead_kv, M, d_k)", "kv_cache",
                   "Every layer's K and V for the M prompt positions, kept so each generated token computes only its "
                   "own: 2 · layers · N · nhead_kv · M · d_k numbers, growing by one position a token.")

FAMILY_EXTRAS: dict[str, tuple[RowSpec, ...]] = {
    "encoder-decoder": EXTRAS,
    "decoder-only": _one_stack_extras("tgt", "dec", "tgt_mask") + (KV_CACHE,),
    "encoder-only": _one_stack_extras("src", "enc", "src_key_padding_mask"),
}


def _latent_extras(stack: str) -> tuple[RowSpec, ...]:
    """Multi-head latent attention's tensors (core.latent_attention): the cached latent and rotary key, and the
    K and V every head gets back from them; the compressed query is added when q_lora_rank > 0."""
    attn = f"{stack}.0.self_attn."
    return (
        RowSpec(0, "latent_kv", "latent c_KV", "(N, M, kv_lora_rank)", attn + "latent",
                "x W_dkv's first kv_lora_rank columns, after an RMSNorm: one narrow vector per position that every "
                "head's K and V are made back from. This, not K and V, is what the KV cache keeps."),
        RowSpec(0, "rope_key", "shared rotary key", "(N, M, rope_head_dim)", attn + "k_rope",
                "x W_dkv's last rope_head_dim columns, turned by RoPE: the positional part of every head's key, one "
                "for all heads, cached beside the latent."),
        RowSpec(0, "q_stacked", "Q, all heads stacked", "(N, nhead, M, nope_head_dim + rope_head_dim)", attn + "q",
                "Every head's query: nope_head_dim plain dimensions, then rope_head_dim turned by RoPE."),
        RowSpec(0, "k_stacked", "K, all heads, made back from the latent",
                "(N, nhead, M, nope_head_dim + rope_head_dim)", attn + "k",
                "c_KV W_ukv gives each head's plain key part; the shared rotary key, copied to every head, follows."),
        RowSpec(0, "v_stacked", "V, all heads, made back from the latent", "(N, nhead, M, v_head_dim)", attn + "v",
                "c_KV W_ukv's other columns: each head's values, v_head_dim wide."),
        RowSpec(0, "scores_pre_softmax", "scaled scores before softmax", "(N, nhead, M, M)", attn + "scores",
                "QK^T / sqrt(nope_head_dim + rope_head_dim) after masking: blocked entries are -inf."),
    )


COMPRESSED_QUERY = RowSpec(
    0, "compressed_query", "compressed query", "(N, M, q_lora_rank)", "dec.0.self_attn.q_latent",
    "x W_dq after an RMSNorm: the queries' own bottleneck, which W_uq widens to every head's query. It saves "
    "weights, not cache: queries are never cached.")
LATENT_KV_CACHE = RowSpec(
    0, "kv_cache", "KV cache after the prompt (latents)", "(layers, N, M, kv_lora_rank + rope_head_dim)", "kv_cache",
    "Every layer's latent c_KV and shared rotary key for the M prompt positions, side by side: kv_lora_rank + "
    "rope_head_dim numbers per token and layer, whatever nhead is. Each step makes K and V back from them.")


def _latent_rows(spec: RowSpec) -> RowSpec:
    """A one-stack row as multi-head latent attention shapes it: its heads are not E/nhead wide."""
    changes = {
        "rotation_table": dict(formula="(M, rope_head_dim)", description="The angle each position turns each "
                               "neighbouring pair of the rope_head_dim rotary dimensions by, in every layer."),
        "q_one_head": dict(formula="(N, M, nope_head_dim + rope_head_dim)", description="Head 0's queries: "
                           "nope_head_dim plain dimensions, then rope_head_dim turned by RoPE."),
        "kv_one_head": dict(name="K of one head, made back from the latent",
                            formula="(N, M, nope_head_dim + rope_head_dim)", description="Head 0's keys: its plain "
                            "part from the latent c_KV times W_ukv, then the rotary key all heads share."),
        "head_output": dict(formula="(N, M, v_head_dim)"),
        "concatenated_heads": dict(formula="(N, M, nhead * v_head_dim)",
                                   description="All nhead outputs side by side, before W_o brings them back to E."),
    }.get(spec.key)
    return spec if changes is None else replace(spec, **changes)


def _first_attention(cfg: TransformerConfig) -> str:
    return "dec.0." if cfg.arch == "decoder-only" else "enc.0."


def relative_rows(stack: str, L: str = "M", side: str = "") -> tuple[RowSpec, RowSpec]:
    """T5's relative positions in a stack ('enc' or 'dec') whose sequence is ``L`` long: the bucket of every
    (query, key) pair, and the bias the stack's table gives those buckets."""
    causal = stack == "dec"
    return (
        RowSpec(0, f"{side}relative_buckets", f"{side.replace('_', ' ')}relative position buckets", f"({L}, {L})",
                f"{stack}.relative_buckets",
                "The bucket of each (query i, key j) pair, from the offset j − i alone: one bucket per small distance, "
                "then logarithmically wider ones up to relative_max_distance, and one for all beyond. "
                + ("Causal: every bucket counts keys at or before the query." if causal else
                   "Bidirectional: keys before and after the query get buckets of their own.")),
        RowSpec(0, f"{side}relative_bias", f"{side.replace('_', ' ')}relative position bias", f"(nhead, {L}, {L})",
                f"{stack}.relative_bias",
                "Each pair's bucket looked up in the stack's (relative_buckets, nhead) table, one number per head, "
                "added to the scores Q Kᵀ of every layer of the stack (T5 divides by no sqrt(d_k)); nothing is "
                "added to the embeddings."),
    )


def rows_for(cfg: TransformerConfig) -> tuple[RowSpec, ...]:
    """The rows a config's pass shows, numbered from 1: its family's list, with the positional row its kind
    has (an added table (M, E), RoPE's rotation table (M, d_k), T5's buckets (M, M) and bias (nhead, M, M),
    or none at all)."""
    out = []
    for spec in FAMILY_ROWS[cfg.arch]:
        if spec.key == "positional_encoding" and cfg.positional == "none":
            continue  # nothing is added, and nothing turns q and k: the model cannot tell positions apart
        if spec.key == "positional_encoding" and cfg.positional == "relative":
            for row in relative_rows(_first_attention(cfg)[:3]):
                out.append(replace(row, index=len(out) + 1))
            continue
        if spec.key == "positional_encoding" and cfg.positional == "rope":
            spec = replace(spec, key="rotation_table", name="RoPE's rotation table", formula="(M, d_k)",
                           description="The angle each position turns each pair of a query's or key's dimensions "
                           "by, in every layer; nothing is added to the embeddings.")
        if cfg.attention == "mla":
            spec = _latent_rows(spec)
        if spec.key == "attention_scores" and _t5_scores(cfg):
            spec = replace(spec, description=spec.description + _t5_scores(cfg))
        out.append(spec if spec.index == len(out) + 1 else replace(spec, index=len(out) + 1))
    return tuple(_parts_row(cfg, spec) for spec in out)


def _t5_scores(cfg: TransformerConfig) -> str:
    """How this model's scores differ from QK^T / sqrt(d_k), in a sentence; '' when they do not."""
    parts = ([] if cfg.scale_scores else ["QK^T is not divided by sqrt(d_k) (T5 folds it into W_q)"]) + (
        ["the stack's relative position bias is added to it"] if cfg.positional == "relative" else [])
    return f" In this model {' and '.join(parts)}." if parts else ""


def extras_for(cfg: TransformerConfig) -> tuple[RowSpec, ...]:
    """The extras a config's pass shows: its family's, with K and V at nhead_kv heads, SwiGLU's gate and up,
    and the first norm's statistics where the parts call for them."""
    attn = _first_attention(cfg)
    ffn = attn + "ffn."
    out = list(FAMILY_EXTRAS[cfg.arch])
    if cfg.attention == "mla":  # one-stack families only: the latents replace K/V heads and per-head weights
        mask = [s for s in out if s.key in ("causal_mask", "key_padding_mask")]
        out = list(_latent_extras(attn.split(".")[0]))
        if cfg.q_lora_rank:
            out.insert(2, replace(COMPRESSED_QUERY, hook=attn + "self_attn.q_latent"))
        out += mask + ([LATENT_KV_CACHE] if cfg.arch == "decoder-only" else [])
    if cfg.window:  # windowed layers cache at most `window` positions each
        out = [replace(s, name="KV cache of the windowed layers", formula="(windowed_layers, 2, N, nhead_kv, "
                       "M_window, d_k)", description="A windowed layer keeps only the last min(M, window) positions' K "
                       "and V, as a rolling buffer: no later query looks further back.") if s.key == "kv_cache" else s
               for s in out]
    if cfg.arch == "encoder-decoder" and cfg.nhead_kv != cfg.nhead:
        out = [replace(s, formula="(N, nhead_kv, M, d_k)") if s.key in ("k_stacked", "v_stacked") else s for s in out]
        out.append(RowSpec(0, "kv_head_of_query", "K/V head each query head reads", "(nhead,)",
                           attn + "self_attn.kv_head", "Query head h reads K/V head h // (nhead / nhead_kv)."))
    if cfg.positional == "relative" and cfg.arch == "encoder-decoder":  # the decoder's own, causal table
        out += relative_rows("dec", "M_target", "decoder_")
    if cfg.activation == "swiglu":
        out += [RowSpec(0, "swiglu_gate", "SwiGLU gate projection", "(N, M, d_ff)", ffn + "gate",
                        "x W1, before its SiLU: how much of each hidden unit passes."),
                RowSpec(0, "swiglu_up", "SwiGLU up projection", "(N, M, d_ff)", ffn + "up",
                        "x W3: the values the gate lets through.")]
    out = [_parts_row(cfg, spec) for spec in out]
    if cfg.arch != "encoder-decoder" or cfg.norm_first or cfg.norm != "layernorm":
        stats = (("norm_rms", "RMS of the first norm's input", "root mean square over E, what RMSNorm divides by"),)
        if cfg.norm == "layernorm":
            stats = (("norm_mean", "mean of the first norm's input", "mean over E, which LayerNorm subtracts"),
                     ("norm_std", "spread of the first norm's input", "standard deviation over E, which it divides by"))
        out += [RowSpec(0, key, name, "(N, M)", attn + key, f"Per position: the {text}.") for key, name, text in stats]
    if _t5_scores(cfg):
        out = [replace(s, description=s.description + _t5_scores(cfg)) if s.key == "scores_pre_softmax" else s
               for s in out]
    return tuple(out) + moe_extras(cfg) + window_extras(cfg)


# --- Mixture of experts, head_dim and the sliding window: their rows and extras ---
# T_e (tokens the router sends to expert 0) is the one size the data decides; M_window = min(M, window).


def _stack(cfg: TransformerConfig) -> str:
    return "dec" if cfg.arch == "decoder-only" else "enc"


def _parts_row(cfg: TransformerConfig, spec: RowSpec) -> RowSpec:
    """A family row as the new parts change it: the concatenated heads are nhead·d_k wide when head_dim is not
    E / nhead, and a layer 0 with experts shows expert 0's hidden layer and SwiGLU parts, T_e rows of them."""
    if spec.key == "concatenated_heads" and cfg.nhead * cfg.d_k != cfg.E:
        return replace(spec, formula="(N, M, nhead*d_k)",
                       description="All nhead outputs side by side, nhead · d_k wide (head_dim sets d_k apart from "
                       "E / nhead), before W^O brings them back to E.")
    if not cfg.has_experts(0) or spec.key not in ("ffn_hidden", "swiglu_gate", "swiglu_up"):
        return spec
    hook = spec.hook.replace(".ffn.", ".ffn.expert0.")
    if spec.key == "ffn_hidden":
        return replace(spec, name="one expert's hidden layer", formula="(T_e, d_ff_expert)", hook=hook,
                       description="Expert 0's wide middle, for the T_e tokens the router sent it: a count the data "
                       "decides (on a shape-only pass, the even share N·M·top_k / n_experts, rounded up).")
    return replace(spec, formula="(T_e, d_ff_expert)", hook=hook, name=spec.name + " (expert 0)")


def moe_extras(cfg: TransformerConfig) -> tuple[RowSpec, ...]:
    """The first layer with experts: router, choices, counts, one expert's input and hidden, shared, combined."""
    if not cfg.moe:
        return ()
    ffn = f"{_stack(cfg)}.{cfg.first_dense_layers}.ffn."
    out = [
        RowSpec(0, "router_logits", "router logits", "(N, M, n_experts)", ffn + "router_logits",
                "Each token scored against every expert by one E x n_experts matrix, no bias; softmax makes them "
                "probabilities."),
        RowSpec(0, "top_k_experts", "chosen experts", "(N, M, top_k)", ffn + "top_k_experts",
                "The top_k experts of each token, best first."),
        RowSpec(0, "top_k_weights", "chosen experts' weights", "(N, M, top_k)", ffn + "top_k_weights",
                "Their softmax probabilities" + (", renormalised to sum to 1 (norm_topk)." if cfg.norm_topk else
                                                 ", as they are (norm_topk off): they sum to less than 1.")),
        RowSpec(0, "tokens_per_expert", "tokens per expert", "(n_experts,)", ffn + "tokens_per_expert",
                "How many of the N·M tokens chose each expert: a count the data decides. A shape-only pass has no "
                "data, so it is unknown there; an even spread would give N·M·top_k / n_experts each."),
        RowSpec(0, "expert_input", "one expert's input", "(T_e, E)", ffn + "expert0.in",
                "The T_e tokens routed to expert 0, gathered from every sequence: the one shape set by the data."),
        RowSpec(0, "expert_hidden", "one expert's hidden layer", "(T_e, d_ff_expert)", ffn + "expert0.hidden",
                "Expert 0's wide middle, d_ff_expert wide, for its T_e tokens only."),
    ]
    if cfg.n_shared_experts:
        out.append(RowSpec(0, "shared_expert_output", "shared experts' output", "(N, M, E)", ffn + "shared.out",
                           "The n_shared_experts experts every token passes through, unweighted: one FFN of width "
                           "n_shared_experts · d_ff_expert."))
    out.append(RowSpec(0, "moe_output", "combined experts' output", "(N, M, E)", ffn + "out",
                       "Each token's chosen experts' outputs times their weights, summed"
                       + (", plus the shared experts'." if cfg.n_shared_experts else ".")))
    return tuple(out)


def window_extras(cfg: TransformerConfig) -> tuple[RowSpec, ...]:
    """The band mask of a windowed layer, which layers are windowed, and the cache of the full layers."""
    if not cfg.window:
        return ()
    out = (
        RowSpec(0, "window_mask", "sliding-window mask", "(M, M)", "window_mask",
                "True where blocked: later positions, and those `window` or more behind: a query sees at most the "
                "last window positions, itself included."),
        RowSpec(0, "windowed_layers", "windowed layers", "(layers,)", "windowed_layers",
                "True for a layer that attends through the window; with global_every = k, layers k, 2k, ... "
                "(from 1) attend in full."),
    )
    if cfg.global_every:
        out += (RowSpec(0, "kv_cache_global", "KV cache of the full layers", "(global_layers, 2, N, nhead_kv, M, d_k)",
                        "kv_cache_global", "The full layers keep every position's K and V."),)
    return out
# --- end of the MoE / head_dim / window block ---




SYMBOLS = ("N", "M", "M_target", "E", "nhead", "d_k", "d_ff", "vocab_size", "layers", "nhead_kv",
           "n_experts", "top_k", "d_ff_expert", "T_e", "M_window", "windowed_layers", "global_layers",
           "kv_lora_rank", "q_lora_rank", "rope_head_dim", "nope_head_dim", "v_head_dim")
_TERM = re.compile(r"^\s*([A-Za-z_]+|\d+)\s*(?:([*/+])\s*([A-Za-z_]+|\d+))?\s*$")


def symbol_values(cfg: TransformerConfig, T_e: int | None = None) -> dict[str, int]:
    """The value of every symbol a formula may use, for one config. T_e, the tokens expert 0 got, is the data's:
    give it from a live pass; without it, the even share rounded up stands in, as on a shape-only pass."""
    fields = ("N", "M", "M_target", "E", "nhead", "d_k", "d_ff", "vocab_size", "layers", "nhead_kv")
    values = {name: int(getattr(cfg, name)) for name in fields if getattr(cfg, name) is not None}
    if cfg.moe:
        values |= {"n_experts": cfg.n_experts, "top_k": cfg.top_k, "d_ff_expert": cfg.d_ff_expert,
                   "T_e": -(-cfg.N * cfg.M * cfg.top_k // cfg.n_experts) if T_e is None else T_e}
    if cfg.attention == "mla":
        values |= {name: getattr(cfg, name) for name in MLA_FIELDS}
    windowed = sum(cfg.windowed(i) for i in range(cfg.layers))
    return values | {"M_window": min(cfg.M, cfg.window or cfg.M), "windowed_layers": windowed,
                     "global_layers": cfg.layers - windowed}


def formula_shape(formula: str, cfg: TransformerConfig, T_e: int | None = None) -> tuple[int, ...]:
    """Evaluate a shape formula like '(N, M, E/nhead)' on a config, parsing it (no code is evaluated).
    ``T_e`` is the number of tokens expert 0 got in a live pass (see ``symbol_values``)."""
    values = symbol_values(cfg, T_e)

    def atom(tok: str) -> int:
        if tok.isdigit():
            return int(tok)
        if tok not in values:
            raise ValueError(f"unknown symbol {tok!r} in formula {formula!r}")
        return values[tok]

    body = formula.strip()
    if not (body.startswith("(") and body.endswith(")")):
        raise ValueError(f"formula {formula!r} must be a parenthesised tuple")
    out = []
    inner = body[1:-1].strip()
    for part in inner[:-1].split(",") if inner.endswith(",") else inner.split(","):  # '(nhead,)' has one axis
        match = _TERM.match(part)
        if not match:
            raise ValueError(f"cannot read {part!r} in formula {formula!r}")
        left, op, right = match.groups()
        value = atom(left)
        if op == "*":
            value *= atom(right)
        elif op == "/":
            value //= atom(right)
        elif op == "+":
            value += atom(right)
        out.append(value)
    return tuple(out)


def row_by_key(key: str) -> RowSpec:
    """The spec (row or extra) with this key."""
    for spec in (ROWS + EXTRAS + DECODER_ONLY_ROWS + ENCODER_ONLY_ROWS + FAMILY_EXTRAS["decoder-only"]
                 + _latent_extras("dec") + (COMPRESSED_QUERY, LATENT_KV_CACHE)):
        if spec.key == key:
            return spec
    raise KeyError(key)
