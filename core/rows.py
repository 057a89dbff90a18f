"""The 14 tensors of the first seed note, defined once, plus the extras a learner also meets.

The recorder keys (``hook``) name where the model records each tensor (see core.model.record);
the trace, the pages, the quizzes and the tests all read this one table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .config import TransformerConfig


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

SYMBOLS = ("N", "M", "M_target", "E", "nhead", "d_k", "d_ff", "vocab_size", "layers")
_TERM = re.compile(r"^\s*([A-Za-z_]+|\d+)\s*(?:([*/])\s*([A-Za-z_]+|\d+))?\s*$")


def symbol_values(cfg: TransformerConfig) -> dict[str, int]:
    """The value of every symbol a formula may use, for one config."""
    return {name: int(getattr(cfg, name)) for name in SYMBOLS}


def formula_shape(formula: str, cfg: TransformerConfig) -> tuple[int, ...]:
    """Evaluate a shape formula like '(N, M, E/nhead)' on a config, parsing it (no code is evaluated)."""
    values = symbol_values(cfg)

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
    for part in body[1:-1].split(","):
        match = _TERM.match(part)
        if not match:
            raise ValueError(f"cannot read {part!r} in formula {formula!r}")
        left, op, right = match.groups()
        value = atom(left)
        if op == "*":
            value *= atom(right)
        elif op == "/":
            value //= atom(right)
        out.append(value)
    return tuple(out)


def row_by_key(key: str) -> RowSpec:
    """The spec (row or extra) with this key."""
    for spec in ROWS + EXTRAS:
        if spec.key == key:
            return spec
    raise KeyError(key)
