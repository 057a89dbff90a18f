"""Step through the pass: each row as the operation that makes it, with its operands and its result, in numbers.

A step names its operands (the embedding matrix, W^Q_h, the mask...) and holds them as the live tensors the
model used, so combining them as the formula says gives the row (the tests check every step so). Operands
come from the recorded pass and from the model's own parameters; nothing is recomputed by other code.

Steps cover layer 0 of the first stack, as the rows do, and a stack's output when it has one layer (deeper
layers' inputs are not kept). Legend as in core/model.py: N batch, M length, E width, d_k = E // nhead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from .config import TransformerConfig
from .model import Transformer
from .tokens import TokenBatch, TokenizedText
from .trace import Trace, trace
from .values import SLICE, slice_tensor


@dataclass(frozen=True, eq=False)  # tensors have no single truth value to compare by
class Operand:
    """One input of a step: its symbol, its axes in the learner's notation, and its live values."""

    name: str  # the symbol the formula uses, e.g. "W^Q_0"
    axes: tuple[str, ...]  # e.g. ("E", "d_k"); () for a number
    value: Tensor
    words: str


@dataclass(frozen=True, eq=False)
class Step:
    """How one row is made: ``formula`` over ``operands`` gives ``result`` (the row's own tensor)."""

    index: int
    key: str
    name: str
    formula: str
    words: str
    operands: tuple[Operand, ...]
    result: Tensor
    result_axes: tuple[str, ...]

    def operand(self, name: str) -> Tensor:
        """An operand's values by its symbol."""
        for o in self.operands:
            if o.name == name:
                return o.value
        raise KeyError(name)


def _number(x: float) -> Tensor:
    return torch.tensor(x, dtype=torch.float32)


class _Pass:
    """What the steps read: the trace's recorded tensors and the model's layer-0 modules of the first stack."""

    def __init__(self, t: Trace, model: Transformer, head: int):
        self.t, self.rec, self.cfg = t, t.tensors, t.config
        self.one_stack = model.arch != "encoder-decoder"
        self.side, self.stack = ("tgt", "dec") if model.arch == "decoder-only" else ("src", "enc")
        self.layer = (model.decoder if model.arch == "decoder-only" else model.encoder)[0]
        self.model, self.attn = model, self.layer.self_attn
        if not 0 <= head < self.cfg.nhead:
            raise ValueError(f"head={head} is out of range: nhead={self.cfg.nhead}, so heads 0 to {self.cfg.nhead - 1}")
        self.head, self.kv_head = head, head // (self.cfg.nhead // self.cfg.nhead_kv)
        self.d_k, self.E = self.cfg.d_k, self.cfg.E

    def at(self, name: str) -> Tensor:
        return self.rec[f"{self.stack}.0.{name}"]

    # -- pieces several steps share --------------------------------------------------------------------------

    def norm_operands(self, norm: nn.Module, label: str) -> tuple[list[Operand], str]:
        """A norm's parameters as operands, and its formula applied to s."""
        gamma = Operand(f"γ{label}", ("E",), norm.weight.detach(), "the norm's learned gain, one per dimension")
        eps = Operand("ε", (), _number(norm.eps), "a small number that keeps the division finite")
        if isinstance(norm, nn.RMSNorm):
            return [gamma, eps], f"γ{label} ⊙ s / √(mean(s²) + ε), over E"
        ops = [gamma, eps]
        formula = f"γ{label} ⊙ (s − mean(s)) / √(var(s) + ε)"
        if norm.bias is not None:
            ops.append(Operand(f"β{label}", ("E",), norm.bias.detach(), "the norm's learned shift"))
            formula += f" + β{label}"
        return ops, formula + ", mean and var over E"

    def attention_input(self) -> Operand:
        x = self.rec[f"{self.side}.sum"]  # (N, M, E)
        if not self.cfg.norm_first:
            return Operand("X", ("N", "M", "E"), x, "the summed input (row 4), what layer 0's attention reads")
        with torch.inference_mode():
            h = self.layer.norm1(x)  # (N, M, E): pre-norm attention reads a normalised copy
        return Operand("X", ("N", "M", "E"), h, "the summed input (row 4) after the layer's first norm (pre-norm)")

    def projection(self, which: str) -> tuple[list[Operand], str]:
        """X, W^which_h and b^which_h (and RoPE's angles), and the formula of one head's q or k."""
        linear = self.attn.W_q if which == "Q" else self.attn.W_k
        h = self.head if which == "Q" else self.kv_head
        W = self.attn.head_weights()[f"W_{which}"][h].detach()  # (E, d_k)
        ops = [self.attention_input(), Operand(f"W^{which}_{h}", ("E", "d_k"), W, f"head {h}'s E x d_k projection")]
        formula = f"X · W^{which}_{h}"
        if linear.bias is not None:
            b = linear.bias.detach()[h * self.d_k:(h + 1) * self.d_k]  # (d_k,)
            ops.append(Operand(f"b^{which}_{h}", ("d_k",), b, f"head {h}'s slice of the bias"))
            formula += f" + b^{which}_{h}"
        if self.cfg.positional == "rope":
            ops.append(Operand("θ", ("M", "d_k"), self.rec[f"{self.side}.pos"], "RoPE's angles (row 3)"))
            formula = f"p cos θ + rotate_half(p) sin θ, p = {formula}; rotate_half(a, b) = (−b, a) on d_k's halves"
        return ops, formula

    def blocked(self) -> Tensor:
        """(N, M, M): True where query i may not read key j of item n, from the mask the pass used."""
        N, M = self.cfg.N, self.cfg.M
        if self.cfg.arch == "decoder-only":
            return self.rec["tgt_mask"].expand(N, M, M)  # (M, M) -> (N, M, M)
        return self.rec["src_key_padding_mask"][:, None, :].expand(N, M, M)  # (N, M) -> (N, M, M)

    def ffn_weights(self) -> tuple[list[Operand], str]:
        """W1, b1 (W3, b3 for SwiGLU) as operands and the hidden layer's formula of x."""
        ffn, ops = self.layer.ffn, []
        formula = {"relu": "relu(x · W1 + b1)", "gelu": "gelu(x · W1 + b1)",
                   "swiglu": "silu(x · W1 + b1) ⊙ (x · W3 + b3)"}[self.cfg.activation]
        pairs = [("1", ffn.linear1)] + ([("3", ffn.linear3)] if ffn.linear3 is not None else [])
        for n, linear in pairs:
            ops.append(Operand(f"W{n}", ("E", "d_ff"), linear.weight.detach().T, f"the FFN's E x d_ff matrix W{n}"))
            if linear.bias is not None:
                ops.append(Operand(f"b{n}", ("d_ff",), linear.bias.detach(), f"W{n}'s bias"))
        if ffn.linear1.bias is None:
            formula = formula.replace(" + b1", "").replace(" + b3", "")
        return ops, formula

    def output_weights(self) -> tuple[list[Operand], str]:
        gen = self.model.generator
        ops = [Operand("W_out", ("E", "vocab_size"), gen.weight.detach().T, "the output layer's E x vocab_size matrix")]
        if gen.bias is not None:
            ops.append(Operand("b_out", ("vocab_size",), gen.bias.detach(), "the output layer's bias"))
            return ops, "Y · W_out + b_out"
        return ops, "Y · W_out"


def _embedding(p: _Pass, side: str) -> tuple[list[Operand], str, str]:
    table = p.model.src_embed if side == "src" else p.model.tgt_embed
    tokens = "target" if side == "tgt" and not p.one_stack else "input"
    axis = "M_target" if side == "tgt" and not p.one_stack else "M"
    ops = [Operand("ids", ("N", axis), p.rec[f"{side}.tokens"], f"the {tokens} token ids (N, {axis})"),
           Operand("W_emb", ("vocab_size", "E"), table.lookup.weight.detach(), "the embedding matrix, one row per id")]
    if table.scale:
        ops.append(Operand("√E", (), _number(math.sqrt(table.E)), "the paper's scale (section 3.4)"))
        return ops, "W_emb[ids] × √E", "each id's row of the embedding matrix, times √E"
    return ops, "W_emb[ids]", "each id's row of the embedding matrix"


def _positional(p: _Pass) -> tuple[list[Operand], str, str]:
    M = p.cfg.M
    pos = Operand("pos", ("M",), torch.arange(M, dtype=torch.float32), "the positions 0 .. M-1")
    if p.cfg.positional == "sinusoidal":
        return ([pos], "PE[pos, 2i] = sin(pos / 10000^(2i/E)), PE[pos, 2i+1] = cos(pos / 10000^(2i/E))",
                "fixed sines and cosines, a slower wave at every pair of dimensions")
    if p.cfg.positional == "rope":
        return ([pos], "θ[pos, i] = θ[pos, i + d_k/2] = pos / 10000^(2i/d_k), i < d_k/2",
                "the angle each position turns each pair of a query's or key's dimensions by")
    table = p.model.positional.table.detach()  # (max_len, E)
    return ([Operand("P", ("max_len", "E"), table, "the learned positional table, one row per position")],
            "P[0 .. M-1]", "the first M rows of the learned table")


def steps(t: Trace, model: Transformer, head: int = 0) -> tuple[Step, ...]:
    """Every row of ``t`` that a readable formula makes, in order, for head ``head`` where a row is per-head.

    ``model`` is the model that ran the pass (``step_through`` runs both); ``t`` must not be shape-only.
    """
    if t.shape_only:
        raise ValueError("a shape-only pass computed no values to step through")
    if t.config.attention == "mla":
        raise ValueError("the steps follow multi-head attention's W^Q, W^K and W^V; attention='mla' makes K and V "
                         "back from a latent instead: use attention='mha' to step through a pass")
    p = _Pass(t, model, head)
    cfg, rec, h = t.config, t.tensors, p.head
    out: list[Step] = []

    def add(key: str, ops: list[Operand], formula: str, words: str, result: Tensor, axes: tuple[str, ...]) -> None:
        r = t.row(key)
        out.append(Step(r.index, key, r.name, formula, words, tuple(ops), result, axes))

    side = p.side
    ops, formula, words = _embedding(p, side)
    add("token_embedding", ops, formula, words, rec[f"{side}.embed"], ("N", "M", "E"))
    pos_key = {"sinusoidal": "positional_encoding", "learned": "positional_encoding", "rope": "rotation_table"}
    if cfg.positional in pos_key:
        ops, formula, words = _positional(p)
        add(pos_key[cfg.positional], ops, formula, words, rec[f"{side}.pos"],
            ("M", "d_k") if cfg.positional == "rope" else ("M", "E"))
    emb = Operand("token embedding", ("N", "M", "E"), rec[f"{side}.embed"], "row 2")
    if cfg.positional in ("sinusoidal", "learned"):
        add("summed_embedding", [emb, Operand("PE", ("M", "E"), rec[f"{side}.pos"], "row 3, the same for every item")],
            "token embedding + PE", "each position's vector plus its position's: PE broadcasts over N",
            rec[f"{side}.sum"], ("N", "M", "E"))
    else:
        add("summed_embedding", [emb], "token embedding", "nothing is added: " + (
            "RoPE turns q and k instead" if cfg.positional == "rope" else "the model has no positions"),
            rec[f"{side}.sum"], ("N", "M", "E"))

    ops, formula = p.projection("Q")
    add("q_one_head" if p.one_stack else "qkv_one_head", ops, formula,
        f"head {h}'s queries: every position's input times W^Q_{h}", p.at("self_attn.q")[:, h], ("N", "M", "d_k"))
    if p.one_stack:
        ops, formula = p.projection("K")
        add("kv_one_head", ops, formula, f"K/V head {p.kv_head}'s keys: every position's input times W^K",
            p.at("self_attn.k")[:, p.kv_head], ("N", "M", "d_k"))

    group = cfg.nhead // cfg.nhead_kv
    k_all = p.at("self_attn.k").repeat_interleave(group, dim=1)  # (N, nhead_kv, M, d_k) -> (N, nhead, M, d_k)
    add("attention_scores", [
        Operand("Q", ("N", "nhead", "M", "d_k"), p.at("self_attn.q"), "every head's queries"),
        Operand("K", ("N", "nhead", "M", "d_k"), k_all,
                "the keys each query head reads" + (f" (K/V head h // {group})" if group > 1 else "")),
        Operand("√d_k", (), _number(math.sqrt(p.d_k)), "keeps the dot products' spread near 1"),
        Operand("blocked", ("N", "M", "M"), p.blocked(),
                "True where query i may not read key j: " + ("later positions (causal mask)"
                                                             if cfg.arch == "decoder-only" else "padding")),
    ], "softmax over j of (Q Kᵀ / √d_k, with blocked pairs set to −∞)",
        "how much each query takes from each key: each row sums to 1", p.at("self_attn.weights"),
        ("N", "nhead", "M", "M"))

    add("head_output", [
        Operand(f"A_{h}", ("N", "M", "M"), p.at("self_attn.weights")[:, h], f"head {h}'s attention weights"),
        Operand(f"V_{h}", ("N", "M", "d_k"), p.at("self_attn.v")[:, p.kv_head], f"the values head {h} reads"),
    ], f"A_{h} · V_{h}", "each position's weighted average of the value vectors", p.at("self_attn.heads")[:, h],
        ("N", "M", "d_k"))

    add("concatenated_heads", [
        Operand("heads", ("N", "nhead", "M", "d_k"), p.at("self_attn.heads"), "every head's output"),
    ], "[head_0 | head_1 | … | head_(nhead−1)] along the last axis",
        "the nhead outputs side by side: nhead × d_k = E wide", p.at("self_attn.concat"), ("N", "M", "E"))

    # The FFN reads the residual sum after attention, normalised (post-norm), or a normalised copy (pre-norm).
    x = Operand("x", ("N", "M", "E"), rec[f"{side}.sum"], "the layer's input (row 4)")
    a = Operand("a", ("N", "M", "E"), p.at("self_attn.out"), "the attention's output: concatenated heads · W^O + b^O")
    layer = p.layer
    norm = layer.norm1 if not cfg.norm_first else (layer.norm2 if p.stack == "enc" else layer.norm3)
    nops, nformula = p.norm_operands(norm, "")
    add("ffn_input", [x, a, *nops], nformula + ", s = x + a",
        "the residual sum, normalised" + (" (a copy: the residual path goes on un-normalised)" if cfg.norm_first
                                          else ""), p.at("ffn_in"), ("N", "M", "E"))

    ffn_in = Operand("x", ("N", "M", "E"), p.at("ffn_in"), "the FFN's input")
    wops, hidden_formula = p.ffn_weights()
    w2 = [Operand("W2", ("d_ff", "E"), layer.ffn.linear2.weight.detach().T, "the FFN's d_ff x E matrix")]
    if layer.ffn.linear2.bias is not None:
        w2.append(Operand("b2", ("E",), layer.ffn.linear2.bias.detach(), "W2's bias"))
    out_formula = " · W2" + (" + b2" if layer.ffn.linear2.bias is not None else "")
    if p.one_stack:
        add("ffn_hidden", [ffn_in, *wops], hidden_formula, "the wide middle, per position", p.at("ffn.hidden"),
            ("N", "M", "d_ff"))
        add("ffn_output", [Operand("hidden", ("N", "M", "d_ff"), p.at("ffn.hidden"), "row 11"), *w2],
            "hidden" + out_formula, "back to E wide, per position", p.at("ffn.out"), ("N", "M", "E"))
    else:
        add("ffn_output", [ffn_in, *wops, *w2], hidden_formula + out_formula, "the feed-forward network, per position",
            p.at("ffn.out"), ("N", "M", "E"))

    if cfg.layers == 1:
        final = "memory" if p.stack == "enc" else "dec.out"
        out.append(_stack_output(t, p, p.stack, "final_output" if p.one_stack else "encoder_output", rec[final]))
    if not p.one_stack:
        ops, formula, words = _embedding(p, "tgt")
        if cfg.positional in ("sinusoidal", "learned"):
            ops.append(Operand("PE", ("M_target", "E"), rec["tgt.pos"], "the positional rows of the target's length"))
            formula, words = formula + " + PE", words + ", plus its position's vector"
        add("target_embedding", ops, formula, "the decoder's input ids, shifted right: " + words, rec["tgt.sum"],
            ("N", "M_target", "E"))
        if cfg.layers == 1:
            out.append(_stack_output(t, p, "dec", "decoder_output", rec["dec.out"]))

    ops, formula = p.output_weights()
    last = "dec.out" if cfg.arch != "encoder-only" else "memory"
    y = Operand("Y", ("N", "M_target" if not p.one_stack else "M", "E"), rec[last], "the last stack's output")
    L = "M_target" if not p.one_stack else "M"
    if p.one_stack:
        add("logits", [y, *ops], formula, "a score for every token of the vocabulary, per position", rec["logits"],
            ("N", L, "vocab_size"))
        add("output_probabilities", [Operand("logits", ("N", L, "vocab_size"), rec["logits"], "row 14")],
            "softmax(logits) over vocab_size", "the scores turned into probabilities that sum to 1", rec["probs"],
            ("N", L, "vocab_size"))
    else:
        add("output_probabilities", [y, *ops], f"softmax({formula}) over vocab_size",
            "the output layer's scores, turned into probabilities that sum to 1", rec["probs"], ("N", L, "vocab_size"))
    return tuple(sorted(out, key=lambda s: s.index))


def _stack_output(t: Trace, p: _Pass, stack: str, key: str, result: Tensor) -> Step:
    """A one-layer stack's output: the last residual sum, normalised (post-norm: the layer's last norm;
    pre-norm: the stack's final norm)."""
    rec, cfg = t.tensors, t.config
    layer = p.model.encoder[0] if stack == "enc" else p.model.decoder[0]
    side = "src" if stack == "enc" else "tgt"
    L = "M_target" if stack == "dec" and not p.one_stack else "M"
    ffn_out = Operand("f", ("N", L, "E"), rec[f"{stack}.0.ffn.out"], "the FFN's output")
    if not cfg.norm_first:
        norm = layer.norm2 if stack == "enc" else layer.norm3
        ops = [Operand("x", ("N", L, "E"), rec[f"{stack}.0.ffn_in"], "the FFN's input, which is the residual path"),
               ffn_out]
        sum_formula = "s = x + f"
    else:
        norm = p.model.encoder_norm if stack == "enc" else p.model.decoder_norm
        ops = [Operand("x", ("N", L, "E"), rec[f"{side}.sum"], "the layer's input"),
               Operand("a", ("N", L, "E"), rec[f"{stack}.0.self_attn.out"], "the self-attention's output")]
        sum_formula = "s = x + a"
        if stack == "dec" and not p.one_stack:
            ops.append(Operand("c", ("N", L, "E"), rec["dec.0.cross_attn.out"], "the cross-attention's output"))
            sum_formula += " + c"
        ops.append(ffn_out)
        sum_formula += " + f"
    nops, nformula = p.norm_operands(norm, "")
    r = t.row(key)
    words = ("the residual sum after the FFN, normalised by the layer's last norm" if not cfg.norm_first
             else "every sublayer's output added to the residual path, then the stack's final norm")
    return Step(r.index, key, r.name, f"{nformula}, {sum_formula}", words, tuple(ops + nops), result, ("N", L, "E"))


def step_through(cfg: TransformerConfig, *, text: TokenizedText | TokenBatch | None = None,
                 model: Transformer | None = None, weights: str | None = None,
                 head: int = 0) -> tuple[Trace, tuple[Step, ...]]:
    """A live pass (never shape-only) and its steps; ``model`` defaults to the one ``cfg`` seeds."""
    model = Transformer.from_config(cfg) if model is None else model
    t = trace(cfg, text=text, model=model, weights=weights, shape_only=False)
    return t, steps(t, model, head)


def plain_step(t: Trace, step: Step, item: int = 0, head: int = 0, rows: int = SLICE,
               cols: int = SLICE) -> dict[str, Any]:
    """A step as plain values for a page: its formula and words, and every operand and the result as a 2-D slice
    (values, row labels, column labels) of batch item ``item`` and head ``head``, labelled by the tokens."""
    def view(name: str, axes: tuple[str, ...], value: Tensor) -> dict[str, Any]:
        values, row_labels, col_labels = slice_tensor(t, value, list(axes), name, item, head, rows, cols)
        return {"name": name, "shape": list(value.shape), "axes": list(axes), "values": values,
                "row_labels": row_labels, "col_labels": col_labels}
    return {"index": step.index, "key": step.key, "name": step.name, "formula": step.formula, "words": step.words,
            "operands": [view(o.name, o.axes, o.value) | {"words": o.words} for o in step.operands],
            "result": view(step.name, step.result_axes, step.result)}
