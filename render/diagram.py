"""The architecture figure as an SVG drawing, drawn for the config's family, every arrow labelled with its live shape.

Pure Python (no streamlit, no torch) so it can be unit-tested: it reads the shapes a trace
recorded (``Trace.shapes``, hook name -> shape tuple) and the config, and returns SVG text, which
the explorer shows as an image (``st.image``, so no HTML of ours is put into the page unescaped).

Why a fixed drawing and not Graphviz: the boxes and arrows change only with the parts (family, norm
placement, positions), never with the sizes, yet ``st.graphviz_chart`` lays the figure out again in the
browser after every slider move, which dominated the time from a key press to the new table. The layout
follows the paper's figure, read from the bottom up: the encoder on the left, the decoder on the right;
a single stack (decoder-only, encoder-only) stands alone, its residual paths on the left. The parts only a
single stack can have stand right of it, inside its layer's frame: a mixture of experts' stack and shared experts,
and latent attention's down- and up-projections, its latent and its rotary key; strips under the legend say
which layers are windowed and which keep a dense FFN.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from html import escape
from typing import TYPE_CHECKING

from render.words import counted

if TYPE_CHECKING:  # a type only: importing core's package imports torch
    from core.config import TransformerConfig

# Fill colours by the kind of box, as in the paper's figure.
FILLS = {"io": "#ffffff", "embed": "#fde2e4", "pos": "#e2ecfd", "attn": "#fff4cc", "norm": "#f0f0f0",
         "ffn": "#dff5e1", "head": "#ede2fd", "router": "#fbe3c8", "experts": "#dff5e1", "latent": "#fff4cc"}
CHOSEN_FILL = "#2e7d32"  # an expert the router picked; the others stay FILLS["experts"]
MAX_EXPERT_CELLS = 16  # experts drawn as cells; past it the label says how many
MAX_STRIP_CELLS = 64  # layers drawn as cells in a strip (a periodic pattern reads from its first 64)
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")
NORM_NAMES = {"layernorm": "LayerNorm", "rmsnorm": "RMSNorm"}  # the parts as papers write them
ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU", "swiglu": "SwiGLU"}


@dataclass(frozen=True)
class Box:
    """One box of the figure: its label's lines, where it stands (centre), and its name in words."""

    name: str
    lines: tuple[str, ...]
    kind: str  # a key of FILLS, or "plus" for a residual sum's circle
    x: int
    y: int
    spoken: str
    side: bool = False  # beside a column (positions, RoPE, experts, MLA)
    w: int = 0  # its width, when not the kind's own
    cells: tuple[bool, ...] = ()  # the experts' stack: one cell per expert drawn, True where chosen
    undrawn: int = 0  # experts past the cells drawn, shown as an ellipsis


@dataclass(frozen=True)
class Arrow:
    """One arrow: its two ends, the hook whose recorded shape labels it, and how it runs."""

    tail: str
    head: str
    hook: str
    residual: bool = False  # dashed, beside the column
    role: str = ""  # what its tensor is to the box it enters, in words
    # Right of the column: "h" across, "v" up, "hv" across then up, "vh" up then across; "" the column's rules.
    route: str = ""
    port: int = 0  # how far below the head's centre a side-entering arrow meets it


@dataclass(frozen=True)
class Strip:
    """A row of cells under the legend, one per layer: which layers have a part (windowed, experts)."""

    title: str
    marks: tuple[bool, ...]  # marks[i]: layer i has the part


@dataclass(frozen=True)
class Figure:
    """Every box and arrow of one family's drawing, the dashed layer frames and the legend's lines."""

    boxes: dict[str, Box]
    arrows: tuple[Arrow, ...]
    frames: tuple[tuple[str, int, int, int, int, str], ...]  # label, x0, y0, x1, y1, anchor side
    legend: tuple[str, ...]
    legend_x: int
    height: int
    strips: tuple[Strip, ...] = ()


# Hooks whose recorded tensor has a head axis the arrow does not carry: the arrow shows the
# tensor the block receives, (N, L, E), which is the stacked tensor's heads put back together.
_FROM_HEADS = {"dec.0.cross_attn.q"}


def shape_text(shape: tuple[int, ...]) -> str:
    """(2, 8, 16) -> '(2, 8, 16)'; a 1-tuple keeps no trailing comma."""
    return "(" + ", ".join(str(int(d)) for d in shape) + ")"


def edge_shape(hook: str, shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    """The live shape an arrow carries, read from the trace's recorded shapes."""
    shape = tuple(shapes[hook])
    if hook in _FROM_HEADS:  # (N, nhead, L, d_k) -> the (N, L, E) input the block saw
        N, nhead, L, d_k = shape
        return (N, L, nhead * d_k)
    return shape


# ------------------------------------------------------------------------------------------------
# The drawing: positions in SVG pixels (y grows downwards; the data flows upwards)

WIDTH = 760
MIN_WIDTH = 640  # narrower, the labels would be too small to read: a phone scrolls instead

NODE_W, NODE_H, POS_W, PLUS_R = 150, 34, 110, 11
ENC_X, DEC_X = 200, 540  # column centres; a single stack stands at ENC_X
SKIP = 95  # how far beside its column a residual path runs
SIDE = 135  # how far beside its column a positions box stands
MEMORY_X = 375  # the encoder output's elbow on its way to the cross-attention
STEP, INTO_LAYER, OUT_OF_LAYER = 60, 70, 76  # between box centres
TOP, BOTTOM = 40, 34  # the top box's centre, and the room under the bottom box's centre

RIGHT_X, RIGHT_FAR = 470, 680  # centres of the boxes right of a single stack
SIDE_W, EXPERTS_W = 110, 190  # their widths
CELL = 8  # an expert's cell in the stack
HALO = 'stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"'  # white under the letters


def heads_words(cfg: TransformerConfig) -> str:
    """How the query heads share K/V heads, in the learner's notation (MHA, GQA, MQA or MLA)."""
    h, kv = int(cfg.nhead), int(cfg.nhead_kv)
    if cfg.attention == "mla":
        whose = f"{h} head's" if h == 1 else f"{h} heads'"
        return f"Attention: MLA, nhead = {whose} K and V made back from one latent"
    if kv == h:
        each = "with" if h == 1 else "each with"
        return f"Attention: nhead = {counted(h, 'head')}, {each} its own K and V (MHA)"
    if kv == 1:
        return f"K/V: 1 head shared by all nhead = {h} query heads (MQA)"
    return f"K/V: nhead_kv = {kv} heads shared by groups of {h}/{kv} = {h // kv} query heads (GQA)"


def legend_lines(cfg: TransformerConfig) -> tuple[str, ...]:
    """The parts the figure is drawn with, one line each: what a learner toggled, said where it shows."""
    norm = NORM_NAMES[cfg.norm]
    family = {"encoder-decoder": "Encoder–decoder: two stacks; cross-attention reads the encoder's output",
              "decoder-only": "Decoder-only: one causal stack; no encoder, no cross-attention",
              "encoder-only": "Encoder-only: one stack, unmasked; no decoder, no cross-attention"}[cfg.arch]
    placement = (f"Pre-norm: {norm} before each sub-layer, a final {norm} after the stack" if cfg.norm_first
                 else f"Post-norm: {norm} after each residual add, as in the paper")
    positions = {"sinusoidal": "Positions: the sinusoidal table, added to the embeddings",
                 "learned": "Positions: a learned table (max_len × E), added to the embeddings",
                 "rope": "Positions: RoPE turns Q and K in each self-attention; nothing is added",
                 "none": "Positions: none (nothing tells the positions apart)",
                 "relative": "Positions: T5's relative bias, one table per stack, added to each self-attention's "
                             "scores"}[cfg.positional]
    if cfg.attention == "mla":
        positions = "Positions: RoPE turns Q's and the shared key's rope_head_dim part only"
    ffn = {"relu": "Feed forward: ReLU between two matrices", "gelu": "Feed forward: GELU between two matrices",
           "swiglu": "Feed forward: SwiGLU, three matrices (gate, up, down)"}[cfg.activation]
    return (family, placement, heads_words(cfg), *latent_lines(cfg), positions, *window_lines(cfg),
            *expert_lines(cfg, ffn))


def latent_lines(cfg: TransformerConfig) -> tuple[str, ...]:
    """Multi-head latent attention's cache and its query, in the legend (nothing for MHA, GQA or MQA)."""
    if cfg.attention != "mla":
        return ()
    query = (f"Query: compressed too, E → q_lora_rank = {cfg.q_lora_rank} → heads" if cfg.q_lora_rank
             else "Query: not compressed (q_lora_rank = 0), E → heads in one matrix")
    return (f"Cache: a latent of kv_lora_rank = {cfg.kv_lora_rank} + rotary key of {cfg.rope_head_dim} a token",
            query)


def ordinal(k: int) -> str:
    """2 -> '2nd', 11 -> '11th'."""
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def window_lines(cfg: TransformerConfig) -> tuple[str, ...]:
    """Which layers attend through the sliding window (nothing without one)."""
    if not cfg.window:
        return ()
    if not cfg.global_every:
        return (f"Window: each query sees the last W = {counted(cfg.window, 'position')}, in every layer",)
    k = cfg.global_every
    return (f"Window: W = {cfg.window}; every {ordinal(k)} layer ({k - 1}, {2 * k - 1}, …) attends in full",)


def _layer_span(first: int, last: int) -> str:
    return f"Layer {first}" if first == last else f"Layers {first} to {last}"


def expert_lines(cfg: TransformerConfig, dense: str) -> tuple[str, ...]:
    """The feed forward's line: the dense one, or the experts, their shared ones and the layers left dense."""
    if not cfg.moe:
        return (dense,)
    act = ACTIVATION_NAMES[cfg.activation]
    lines = [f"FFN: {counted(cfg.n_experts, act + ' expert')}; a router picks top_k = {cfg.top_k} for each token"]
    if cfg.n_shared_experts:
        lines.append(f"Shared: {counted(cfg.n_shared_experts, 'expert')} "
                     "every token passes through, beside the chosen")
    if cfg.first_dense_layers:
        k = cfg.first_dense_layers
        lines.append(f"{_layer_span(0, k - 1)} keep{'s' if k == 1 else ''} a dense FFN (first_dense_layers = {k}); "
                     f"drawn: layer {k}")
    return tuple(lines)


def _attention_lines(cfg: TransformerConfig, kind: str, numbered: bool = True) -> tuple[str, ...]:
    """An attention box's label; with shared K/V heads (and ``numbered``) its second line counts them."""
    first = {"self": "Multi-head", "masked": "Masked multi-head", "cross": "Multi-head"}[kind]
    second = "cross-attention" if kind == "cross" else "self-attention"
    title = {"self": "Self-attention", "masked": "Masked self-attention", "cross": "Cross-attention"}[kind]
    every = "" if not cfg.global_every else " or full"  # the strip under the legend says which layers
    window = (f"window W = {cfg.window}{every}",) if cfg.window and numbered and kind != "cross" else ()
    if cfg.attention == "mla" and numbered:
        return title, f"MLA: {counted(cfg.nhead, 'head')}", *window
    if cfg.nhead_kv == cfg.nhead or not numbered:
        return first, second, *window
    which = "MQA" if cfg.nhead_kv == 1 else "GQA"
    return title, f"{which}: {cfg.nhead_kv} K/V for {cfg.nhead} Q", *window


def _ffn_lines(cfg: TransformerConfig) -> tuple[str, ...]:
    if cfg.activation == "swiglu":
        return "Feed forward, SwiGLU", "E → d_ff (gate · up) → E"
    return ("Feed forward" if cfg.activation == "relu" else "Feed forward, GELU"), "E → d_ff → E"


def _spoken(lines: tuple[str, ...]) -> str:
    """A box's label on one line, as a sentence names it: its first letter in lower case only (E stays E)."""
    text = " ".join(lines)
    return text[0].lower() + text[1:]


class _Column:
    """One stack's boxes and arrows, laid out bottom-up; y offsets are made absolute at the end."""

    def __init__(self, cfg: TransformerConfig, stack: str, x: int, skip: int, side: int):
        self.cfg, self.stack, self.x, self.skip_side, self.pos_side = cfg, stack, x, skip, side
        self.word = {"enc": "encoder", "dec": "decoder"}[stack]
        self.paper = cfg.arch == "encoder-decoder"
        self.boxes: list[tuple[Box, int]] = []  # (box with y=0, its offset up from the bottom box)
        self.arrows: list[Arrow] = []
        self.offset = 0
        self.counts: dict[str, int] = {}
        self.frame: tuple[int, int] | None = None

    def add(self, name: str, lines: tuple[str, ...], kind: str, gap: int, spoken: str) -> str:
        self.offset += gap if self.boxes else 0
        self.boxes.append((Box(name, lines, kind, self.x, 0, spoken), self.offset))
        return name

    def beside(self, name: str, lines: tuple[str, ...], of: str, spoken: str) -> str:
        """A positions box beside box ``of``, on the column's positions side."""
        offset = next(o for b, o in self.boxes if b.name == of)
        self.boxes.append((Box(name, lines, "pos", self.x + self.pos_side * SIDE, 0, spoken, side=True), offset))
        return name

    def nth(self, what: str) -> str:
        self.counts[what] = self.counts.get(what, 0) + 1
        return ORDINALS[self.counts[what] - 1]

    def link(self, tail: str, head: str, hook: str, residual: bool = False, role: str = "", route: str = "",
             port: int = 0) -> None:
        self.arrows.append(Arrow(tail, head, hook, residual, role, route, port))

    def inputs(self) -> str:
        """Token ids, their embedding and the added positions; returns the box the first layer reads."""
        side = "src" if self.stack == "enc" else "tgt"
        cfg, s = self.cfg, side
        if self.paper:
            words = ("Inputs", "(source token ids)") if side == "src" else ("Outputs, shifted right",
                                                                            "(target token ids)")
            embed = ("Input embedding", "× √E") if side == "src" else ("Output embedding", "× √E")
            embed = embed if cfg.scale_embeddings else embed[:1]  # T5 scales the decoder output instead
        else:
            words, embed = ("Inputs", "(token ids)"), ("Token embedding",)
        self.add(s, words, "io", 0, _spoken(words))
        self.add(f"{s}_emb", embed, "embed", STEP, _spoken(embed))
        self.link(s, f"{s}_emb", f"{s}.tokens")
        whose = f" ({'source' if side == 'src' else 'target'})" if self.paper else ""
        if cfg.positional in ("sinusoidal", "learned"):
            self.add(f"{s}_add", ("+",), "plus", STEP, f"the {self.word}'s + (embedding plus position)")
            label = ("Positional encoding",) if cfg.positional == "sinusoidal" else ("Learned positions",)
            self.beside(f"{s}_pos", label, f"{s}_add", f"{label[0].lower()}{whose}")
            self.link(f"{s}_emb", f"{s}_add", f"{s}.embed")
            self.link(f"{s}_pos", f"{s}_add", f"{s}.pos")
            return f"{s}_add"
        if cfg.positional == "rope" and cfg.attention == "mla":  # far right, under the rotary key it turns
            self.right(f"{s}_rope", ("RoPE angles", "turn rope_head_dim"), "pos", f"{s}_emb", RIGHT_FAR, SIDE_W,
                       f"RoPE's rotation angles{whose}")
        elif cfg.positional == "rope":
            self.beside(f"{s}_rope", ("RoPE angles", "turn Q and K"), f"{s}_emb", f"RoPE's rotation angles{whose}")
        if cfg.positional == "relative":
            self.beside(f"{s}_rel", ("Relative bias", "layer 0's, shared"), f"{s}_emb",
                        f"T5's relative position bias{whose}, one table in the {self.word}'s first layer, "
                        "shared by all its layers")
        return f"{s}_emb"

    def right(self, name: str, lines: tuple[str, ...], kind: str, row: str | int, x: int, w: int, spoken: str,
              cells: tuple[bool, ...] = (), undrawn: int = 0) -> str:
        """A box right of the column, at x, on the row of box ``row`` (or that offset up from the bottom box)."""
        offset = row if isinstance(row, int) else next(o for b, o in self.boxes if b.name == row)
        self.boxes.append((Box(name, lines, kind, x, 0, spoken, side=True, w=w, cells=cells, undrawn=undrawn),
                           offset))
        return name

    def offset_of(self, name: str) -> int:
        return next(o for b, o in self.boxes if b.name == name)

    def block(self, sub: str, below: str, into: str, gap: int, role: str) -> tuple[str, str]:
        """One sub-layer's boxes above ``below`` (which feeds it ``into``); returns its top box and output hook."""
        cfg, st, p = self.cfg, self.stack, f"{self.stack}.0."
        if sub == "ffn" and cfg.moe:
            return self.experts(below, into, gap)
        if sub == "ffn":
            lines = _ffn_lines(cfg)
            name = self.add(f"{st}_ffn", lines, "ffn", gap, f"{self.word} {lines[0][0].lower()}{lines[0][1:]} "
                                                            f"({lines[1]})")
            self.link(below, name, into, role=role)
            return name, p + "ffn.out"
        kind_of = "cross" if sub == "cross" else ("masked" if st == "dec" else "self")
        name = {"self": f"{st}_attn", "masked": f"{st}_self", "cross": f"{st}_cross"}[kind_of]
        lines = _attention_lines(cfg, kind_of)
        spoken = f"{self.word} {' '.join(_attention_lines(cfg, kind_of, numbered=False)).lower()}"
        if cfg.attention == "mla" and sub == "self":
            spoken += f" (MLA, {counted(cfg.nhead, 'head')})"
        elif cfg.nhead_kv != cfg.nhead:
            which = lines[1].split(":")[0]  # MQA or GQA
            spoken += f" ({which}: {counted(cfg.nhead_kv, 'K/V head')} for {cfg.nhead} query heads)"
        if cfg.window and sub == "self":
            spoken += f" through a window of W = {counted(cfg.window, 'position')}"
        if cfg.attention == "mla" and sub == "self":
            return self.latent(below, into, gap, name, lines, spoken), p + "self_attn.out"
        self.add(name, lines, "attn", gap, spoken)
        self.link(below, name, into, role=role)
        return name, p + f"{sub}_attn.out"

    def experts(self, below: str, into: str, gap: int) -> tuple[str, str]:
        """A mixture of experts: the router in the column, the stack of experts (top_k marked) and a shared
        expert right of it, and the weighted sum over them; drawn from the first layer that has experts."""
        cfg, st = self.cfg, self.stack
        p = f"{st}.{cfg.first_dense_layers}.ffn."  # the first layers may keep a dense FFN
        act = ACTIVATION_NAMES[cfg.activation]
        router = self.add(f"{st}_router", ("Router", f"E → n_experts = {cfg.n_experts}"), "router", gap,
                          f"the {self.word}'s router (E → n_experts = {cfg.n_experts}, top_k = {cfg.top_k})")
        combine = self.add(f"{st}_combine", ("Weighted sum", f"of the top_k = {cfg.top_k}"
                                             + (" + shared" if cfg.n_shared_experts else "")), "ffn", STEP,
                           f"the weighted sum of the chosen experts' outputs"
                           + (" and the shared experts' output" if cfg.n_shared_experts else ""))
        cells = tuple(i < cfg.top_k for i in range(min(cfg.n_experts, MAX_EXPERT_CELLS)))
        spoken = (f"the stack of {counted(cfg.n_experts, 'expert')} ({act}, E → d_ff_expert = {cfg.d_ff_expert} "
                  f"→ E), top_k = {cfg.top_k} of them chosen for each token")
        stack = self.right(f"{st}_experts", (f"{counted(cfg.n_experts, 'expert')}, top_k = {cfg.top_k} filled",
                                             f"{act}: E → d_ff_expert → E"), "experts", router, RIGHT_X, EXPERTS_W,
                           spoken, cells=cells, undrawn=cfg.n_experts - len(cells))
        self.link(below, router, into)
        self.link(router, stack, p + "expert0.in", role=" (the tokens routed to one expert, T_e of them)",
                  route="h")
        if cfg.n_shared_experts:
            n = cfg.n_shared_experts
            shared = self.right(f"{st}_shared", (f"Shared expert{'s' if n > 1 else ''} × {n}",
                                                 "every token, E → E"), "ffn", router, RIGHT_FAR, SIDE_W,
                                f"the {counted(n, 'shared expert')} every token passes through")
            self.link(below, shared, into, route="hv")
        self.link(stack, combine, p + "expert0.out", role=" (one expert's outputs, weighted)", route="vh", port=6)
        if cfg.n_shared_experts:
            self.link(shared, combine, p + "shared.out", route="vh", port=-6)
        self.link(router, combine, p + "top_k_weights", role=" as each token's top_k weights")
        return combine, p + "out"

    def latent(self, below: str, into: str, gap: int, name: str, lines: tuple[str, ...], spoken: str) -> str:
        """Multi-head latent attention: the query's projections in the column, the latent's down- and
        up-projections right of it, and the rotary key every head shares; returns the attention's box."""
        cfg, st, p = self.cfg, self.stack, f"{self.stack}.0.self_attn."
        side = "tgt" if st == "dec" else "src"
        if cfg.q_lora_rank:
            down_q = self.add(f"{st}_q_down", ("Query down W_DQ", f"E → q_lora_rank = {cfg.q_lora_rank}"), "attn",
                              gap, f"the query's down-projection W_DQ (E → q_lora_rank = {cfg.q_lora_rank})")
            up_q = "the query's up-projection W_UQ (q_lora_rank → nhead · (nope_head_dim + rope_head_dim))"
            query = self.add(f"{st}_q_up", ("Query up W_UQ", "q_lora_rank → nhead · d_qk"), "attn", STEP, up_q)
            self.link(below, down_q, into)
            self.link(down_q, query, p + "q_latent", role=" (the query's latent, normalised)")
        else:
            query = self.add(f"{st}_q", ("Query W_Q", "E → nhead · d_qk"), "attn", gap + STEP,
                             "the query projection W_Q (E → nhead · (nope_head_dim + rope_head_dim))")
            self.link(below, query, into)
        attn = self.add(name, lines, "attn", STEP, spoken)
        row1 = self.offset_of(query) - STEP  # the row above ``below``: W_DQ's, or the one W_Q's arrow passes
        down = self.right(f"{st}_kv_down", ("Down W_DKV", "E → d_c + rope_head_dim"), "attn", row1,
                          RIGHT_X, SIDE_W + 40, "the down-projection W_DKV (E → kv_lora_rank + rope_head_dim)")
        latent = self.right(f"{st}_latent", ("Latent c_KV, cached", f"kv_lora_rank = {cfg.kv_lora_rank}"),
                            "latent", row1 + STEP, RIGHT_X, SIDE_W + 40,
                            f"the latent c_KV, kv_lora_rank = {cfg.kv_lora_rank} wide, which the cache keeps")
        up = self.right(f"{st}_kv_up", ("Up W_UKV", "d_c → each head's K, V"), "attn", attn, RIGHT_X, SIDE_W + 40,
                        "the up-projection W_UKV (kv_lora_rank → nhead · (nope_head_dim + v_head_dim))")
        rotary = self.right(f"{st}_k_rope", ("Rotary key, cached", "shared by all heads"), "pos", row1, RIGHT_FAR,
                            SIDE_W, f"the rotary key k_rope, rope_head_dim = {cfg.rope_head_dim} wide, one for all "
                                    "heads, which the cache keeps")
        self.link(query, attn, p + "q", role=" as every head's query")
        self.link(below, down, into, route="hv")
        self.link(down, latent, p + "latent", role=" (normalised)", route="v")
        self.link(down, rotary, p + "k_rope", route="h")
        self.link(f"{side}_rope", rotary, f"{side}.pos", role=" to turn it (and each query's rotary part)", route="v")
        self.link(latent, up, p + "latent", route="v")
        self.link(rotary, up, p + "k_rope", role=" to join every head's key", route="vh")
        self.link(up, attn, p + "k", role=" as every head's K (its rotary part joined)", route="h", port=-7)
        self.link(up, attn, p + "v", role=" as every head's V", route="h", port=7)
        return attn

    def layer(self, below: str, first_hook: str, sublayers: tuple[str, ...], out_hook: str) -> str:
        """One layer of the stack, post-norm or pre-norm, inside a dashed frame; returns its top box."""
        cfg, st, p = self.cfg, self.stack, f"{self.stack}.0."
        norm = NORM_NAMES[cfg.norm]
        x_box, x_hook = below, first_hook
        start = len(self.boxes)
        gap = INTO_LAYER
        for i, sub in enumerate(sublayers, 1):
            into = p + "ffn_in" if sub == "ffn" else p + "cross_attn.q" if sub == "cross" else x_hook
            role = " as its queries" if sub == "cross" else ""
            name = {"ffn": f"{st}_ffn", "cross": f"{st}_cross"}.get(sub, f"{st}_self" if st == "dec" else f"{st}_attn")
            if cfg.norm_first:
                self.link(x_box, f"{st}_norm{i}", x_hook)
                n = self.add(f"{st}_norm{i}", (norm,), "norm", gap, f"the {self.word}'s {self.nth('norm')} {norm}")
                top, out = self.block(sub, n, into, STEP, role)
                plus = self.add(f"{st}_add{i}", ("+",), "plus", STEP,
                                f"the {self.word}'s {self.nth('plus')} residual +")
                self.link(x_box, plus, x_hook, residual=True)
                self.link(top, plus, out)
                x_box, x_hook = plus, out
            else:
                top, out = self.block(sub, x_box, into, gap, role)
                add_norm = "Add & Norm" if cfg.norm == "layernorm" else f"Add & {norm}"
                n = self.add(f"{st}_norm{i}", (add_norm,), "norm", STEP,
                             f"the {self.word}'s {self.nth('norm')} {add_norm}")
                self.link(x_box, n, x_hook, residual=True)
                self.link(top, n, out)
                next_sub = sublayers[i] if i < len(sublayers) else None
                after = {"ffn": p + "ffn_in", "cross": p + "cross_attn.q", None: out_hook}[next_sub]
                x_box, x_hook = n, after
            if cfg.positional == "rope" and sub == "self" and cfg.attention != "mla":  # MLA's turns its k_rope
                self.link(f"{'src' if st == 'enc' else 'tgt'}_rope", name,
                          f"{'src' if st == 'enc' else 'tgt'}.pos", role=" to turn its Q and K")
            if cfg.positional == "relative" and sub == "self":
                self.link(f"{'src' if st == 'enc' else 'tgt'}_rel", name, f"{st}.relative_bias",
                          role=" to add to its scores")
            gap = STEP
        self.frame = (start, len(self.boxes) - 1)
        if cfg.norm_first:
            final = self.add(f"{st}_final", (f"Final {norm}",), "norm", OUT_OF_LAYER,
                             f"the {self.word}'s final {norm}")
            self.link(x_box, final, p + "out")
            return final
        return x_box

    def head(self, below: str, hook: str) -> None:
        """The output layer over the vocabulary, its softmax, the probabilities."""
        gap = STEP if self.cfg.norm_first else OUT_OF_LAYER
        tied = " (tied)" if self.cfg.tie_embeddings and not self.paper else ""
        self.add("linear", ("Linear" + tied, "E → vocab_size"), "head", gap, "linear" + tied + " E → vocab_size")
        self.add("softmax", ("Softmax",), "head", STEP, "softmax")
        self.add("probs", ("Output probabilities",), "io", STEP, "output probabilities")
        self.link(below, "linear", hook)
        self.link("linear", "softmax", "logits")
        self.link("softmax", "probs", "probs")


def figure(cfg: TransformerConfig) -> Figure:
    """Where every box and arrow of ``cfg``'s family goes: two columns for the encoder-decoder, one otherwise."""
    columns: list[_Column] = []
    arrows: list[Arrow] = []
    if cfg.arch == "encoder-decoder":
        enc = _Column(cfg, "enc", ENC_X, -1, -1)
        dec = _Column(cfg, "dec", DEC_X, +1, +1)
        top = enc.layer(enc.inputs(), "src.sum", ("self", "ffn"), "memory")
        dec_top = dec.layer(dec.inputs(), "tgt.sum", ("self", "cross", "ffn"), "dec.out")
        dec.head(dec_top, "dec.out")
        columns = [enc, dec]
        memory = Arrow(top, "dec_cross", "memory", role=" as the memory (its keys and values)")
        arrows = [*enc.arrows, memory, *dec.arrows]  # the order the data flows
    else:
        stack = "dec" if cfg.arch == "decoder-only" else "enc"
        col = _Column(cfg, stack, ENC_X, -1, +1)
        below = col.inputs()
        top = col.layer(below, f"{'tgt' if stack == 'dec' else 'src'}.sum", ("self", "ffn"),
                        "dec.out" if stack == "dec" else "memory")
        col.head(top, "dec.out" if stack == "dec" else "memory")
        columns, arrows = [col], col.arrows
    span = max(c.offset for c in columns)
    height = TOP + span + BOTTOM
    boxes: dict[str, Box] = {}
    frames = []
    for c in columns:
        bottom = height - BOTTOM
        for box, offset in c.boxes:
            boxes[box.name] = replace(box, y=bottom - offset)
        first, last = c.frame
        layer = [b for b, _ in c.boxes[first:last + 1] if not b.side]
        lo, hi = boxes[layer[0].name], boxes[layer[-1].name]
        wide = c.skip_side  # the residual side gets the room for the residual arrows' labels
        x0, x1 = (c.x - 150, c.x + 118) if wide < 0 else (c.x - 118, c.x + 150)
        beside = [boxes[b.name] for b, _ in c.boxes[first:last + 1] if b.side]  # experts, MLA's projections
        x1 = max([x1] + [b.x + _half(b)[0] + 14 for b in beside])
        y0 = min([hi.y - _half(hi)[1]] + [b.y - _half(b)[1] - (8 if b.kind == "experts" else 0)
                                          for b in beside]) - 14
        y1 = max([lo.y + _half(lo)[1]] + [b.y + _half(b)[1] for b in beside]) + 14
        n = int(cfg.layers)
        word = c.word.capitalize() + " layer" if cfg.arch == "encoder-decoder" else "Layer"
        # Boxes right of a single stack leave its frame's right end free for the label, clear of the column's arrows.
        anchor = "start" if wide < 0 and not beside else "end"
        frames.append((f"{word} × {n}{_dense_words(cfg)}", x0, y0, x1, y1, anchor))
    legend_x = 20 if cfg.arch == "encoder-decoder" else ENC_X + 130
    return Figure(boxes, tuple(arrows), tuple(frames), legend_lines(cfg), legend_x, height, layer_strips(cfg))


def _dense_words(cfg: TransformerConfig) -> str:
    """The frame's note on the layers drawn without their experts."""
    if not cfg.moe or not cfg.first_dense_layers:
        return ""
    k = cfg.first_dense_layers
    return f", {_layer_span(0, k - 1).lower()} with a dense FFN"


def layer_strips(cfg: TransformerConfig) -> tuple[Strip, ...]:
    """One strip per part that only some layers have, or that a learner asks about per layer."""
    strips = []
    if cfg.window:
        layers = "Layer 0" if cfg.layers == 1 else f"Layers 0 → {cfg.layers - 1}"
        strips.append(Strip(f"{layers}: filled windowed (W = {cfg.window}), empty full",
                            tuple(cfg.windowed(i) for i in range(cfg.layers))))
    if cfg.moe and cfg.first_dense_layers:
        strips.append(Strip(f"Layers 0 → {cfg.layers - 1}: filled with experts, empty with a dense FFN",
                            tuple(cfg.has_experts(i) for i in range(cfg.layers))))
    return tuple(strips)


STRIP_ROW = 30  # a strip's title line and its row of cells


def strips_top(f: Figure) -> int:
    """Where the strips start: under the legend's last line."""
    return 22 + 14 * (len(f.legend) - 1) + 12


def _strips_svg(f: Figure) -> str:
    parts = []
    for k, strip in enumerate(f.strips):
        y = strips_top(f) + k * STRIP_ROW
        n = min(len(strip.marks), MAX_STRIP_CELLS)
        cell = max(4, min(12, (WIDTH - 20 - f.legend_x) // n))
        more = f" (the first {n} of {len(strip.marks)})" if n < len(strip.marks) else ""
        parts.append(f'<g class="strip"><text x="{f.legend_x}" y="{y + 8}" font-size="10" fill="#333">'
                     f'{escape(strip.title + more)}</text>')
        for i, mark in enumerate(strip.marks[:n]):
            parts.append(f'<rect class="layer{" marked" if mark else ""}" x="{f.legend_x + i * cell}" y="{y + 13}" '
                         f'width="{cell - 1}" height="10" fill="{"#555" if mark else "#ffffff"}" stroke="#555" '
                         f'stroke-width="0.6"><title>layer {i}</title></rect>')
        parts.append("</g>")
    return "".join(parts)


def _half(box: Box) -> tuple[int, int]:
    """Half the width and half the height of a box's shape: a third line, or the experts' cells, make it taller."""
    if box.kind == "plus":
        return PLUS_R, PLUS_R
    rows = len(box.lines) + (1 if box.cells else 0)
    height = NODE_H + 13 * max(0, rows - 2)
    return (box.w or (POS_W if box.side else NODE_W)) // 2, height // 2


def _cells_svg(box: Box) -> str:
    """The experts' row of cells under their label, the chosen top_k filled: which ones differs per token."""
    n = len(box.cells)
    left = box.x - (n * (CELL + 2) - 2) / 2
    y = box.y + _half(box)[1] - CELL - 5
    more = f'<text x="{left + n * (CELL + 2) + 1:g}" y="{y + CELL}" font-size="11">…</text>' if box.undrawn else ""
    return more + "".join(f'<rect class="expert{" chosen" if chosen else ""}" x="{left + i * (CELL + 2):g}" y="{y}" '
                   f'width="{CELL}" height="{CELL}" fill="{CHOSEN_FILL if chosen else "#ffffff"}" stroke="#333" '
                   'stroke-width="0.6"/>' for i, chosen in enumerate(box.cells))


def _box_svg(box: Box) -> str:
    x, y = box.x, box.y
    if box.kind == "plus":
        return (f'<circle cx="{x}" cy="{y}" r="{PLUS_R}" fill="#ffffff" stroke="#333"/>'
                f'<text x="{x}" y="{y + 4}" text-anchor="middle" font-size="13">+</text>')
    w, h = _half(box)
    text = "".join(f'<tspan x="{x}" dy="{0 if i == 0 else 13}">{escape(line)}</tspan>'
                   for i, line in enumerate(box.lines))
    top = y + 4 - 6.5 * (len(box.lines) - 1) - (6.5 if box.cells else 0)  # the lines' block centred on the box
    rect = (f'<rect x="{x - w}" y="{y - h}" width="{2 * w}" height="{2 * h}" rx="8" fill="{FILLS[box.kind]}" '
            'stroke="#333"/>')
    behind = "".join(rect.replace(f'x="{x - w}" y="{y - h}"', f'x="{x - w + d}" y="{y - h - d}"')
                     for d in (8, 4)) if box.kind == "experts" else ""  # a stack of boxes, one per expert
    return (f'{behind}{rect}<text x="{x}" y="{top}" text-anchor="middle" font-size="11">{text}</text>'
            + _cells_svg(box))


def _geometry(f: Figure, arrow: Arrow) -> tuple[list[tuple[float, float]], tuple[float, float, str]]:
    """The polyline of one arrow, and where its label goes: (x, y, text-anchor)."""
    t, h = f.boxes[arrow.tail], f.boxes[arrow.head]
    (tw, th), (hw, hh) = _half(t), _half(h)
    if arrow.route:
        return _routed(arrow, t, h)
    left = h.x <= (ENC_X + DEC_X) / 2 if len({b.x for b in f.boxes.values() if not b.side}) > 1 else True
    if arrow.residual:
        # Branch off the arrow that leaves ``tail`` upwards, run beside the column, enter the sum's side.
        branch = t.y - th - 11
        skip = h.x - SKIP if left else h.x + SKIP
        side = h.x - hw if left else h.x + hw
        points = [(t.x, branch), (skip, branch), (skip, h.y), (side, h.y)]
        mid = (branch + h.y) / 2 + 3
        return points, ((skip - 6, mid, "end") if left else (skip + 6, mid, "start"))
    if t.side and abs(t.y - h.y) < 1:  # a positions box beside the "+", horizontally
        start = t.x + tw if t.x < h.x else t.x - tw
        end = h.x - hw if t.x < h.x else h.x + hw
        return [(start, t.y), (end, h.y)], ((start + end) / 2, t.y + 16, "middle")
    if t.side:  # RoPE's angles: up beside the column, then into the attention's side
        end = h.x - hw if t.x < h.x else h.x + hw
        points = [(t.x, t.y - th), (t.x, h.y), (end, h.y)]
        return points, (t.x + (6 if t.x > h.x else -6), (t.y - th + h.y) / 2 + 3, "start" if t.x > h.x else "end")
    if t.x != h.x:  # the encoder output, up and over to the decoder's cross-attention
        elbow = t.y - th - 29
        points = [(t.x, t.y - th), (t.x, elbow), (MEMORY_X, elbow), (MEMORY_X, h.y), (h.x - hw, h.y)]
        return points, ((t.x + MEMORY_X) / 2 + 6, elbow - 6, "middle")
    points = [(t.x, t.y - th), (h.x, h.y + hh)]  # straight up the column
    mid = (t.y - th + h.y + hh) / 2 + 3
    return points, ((t.x + 6, mid, "start") if left else (t.x - 6, mid, "end"))


def _routed(arrow: Arrow, t: Box, h: Box) -> tuple[list[tuple[float, float]], tuple[float, float, str]]:
    """An arrow to or from a box right of the column, which runs as its ``route`` says."""
    (tw, th), (hw, hh) = _half(t), _half(h)
    y = h.y + arrow.port
    if arrow.route == "h":  # straight across, its label under it (over it for the upper of two)
        start, end = (t.x + tw, h.x - hw) if t.x < h.x else (t.x - tw, h.x + hw)
        return [(start, y), (end, y)], ((start + end) / 2, y - 4 if arrow.port < 0 else y + 12, "middle")
    if arrow.route == "v":  # straight up, its label on the side with room
        points = [(t.x, t.y - th), (h.x, h.y + hh)]
        mid = (t.y - th + h.y + hh) / 2 + 3
        return points, ((t.x - 6, mid, "end") if t.x >= RIGHT_FAR else (t.x + 6, mid, "start"))
    if arrow.route == "hv":  # across from the tail's side, then up into the head's bottom
        start = t.x + tw if t.x < h.x else t.x - tw
        points = [(start, t.y), (h.x, t.y), (h.x, h.y + hh)]
        mid = (t.y + h.y + hh) / 2 + 3
        return points, ((h.x - 6, mid, "end") if h.x >= RIGHT_FAR else (h.x + 6, mid, "start"))
    end = h.x + hw if t.x > h.x else h.x - hw  # "vh": up from the tail's top, then across into the head's side
    points = [(t.x, t.y - th), (t.x, y), (end, y)]
    mid = (t.y - th + y) / 2 + 3
    return points, ((t.x - 6, mid, "end") if t.x > h.x else (t.x + 6, mid, "start"))


FAMILY_TITLE = {"encoder-decoder": "The Transformer", "decoder-only": "The decoder-only Transformer",
                "encoder-only": "The encoder-only Transformer"}


def architecture_title(cfg: TransformerConfig) -> str:
    """What the figure shows, in words: its title, and the text a screen reader reads for it."""
    n = int(cfg.layers)
    if cfg.arch == "encoder-decoder":
        drawn = ("its single encoder layer and its single decoder layer" if n == 1
                 else f"one of its {n} encoder layers and one of its {n} decoder layers")
    else:
        drawn = "its single layer" if n == 1 else f"one of its {n} layers"
    return f"{FAMILY_TITLE[cfg.arch]}: {drawn}, every arrow labelled with the shape of the tensor it carries"


def architecture_steps(cfg: TransformerConfig, shapes: dict[str, tuple[int, ...]]) -> list[str]:
    """The figure in words, one sentence per arrow in the order the data flows, built from the SVG's arrows:
    a screen reader gets only the image's alt text."""
    f = figure(cfg)
    steps = []
    for a in f.arrows:
        path = " around the block (residual path)" if a.residual else ""
        steps.append(f"From {f.boxes[a.tail].spoken}{path} to {f.boxes[a.head].spoken}{a.role}: "
                     f"{shape_text(edge_shape(a.hook, shapes))}")
    return steps


def architecture_svg(cfg: TransformerConfig, shapes: dict[str, tuple[int, ...]]) -> str:
    """The config's family as SVG text: one layer per stack in a dashed '× layers' box, arrows labelled with
    layer 0's shapes, each arrow a group with its ends in data attributes so tests can read it back."""
    f = figure(cfg)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {f.height}" width="{WIDTH}" '
        f'height="{f.height}" font-family="Helvetica, Arial, sans-serif">',  # an image: no page fonts
        f'<title>{escape(architecture_title(cfg))}</title>',
        '<defs>'
        '<marker id="arch-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
        '<marker id="arch-head-skip" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#999"/></marker>'
        '</defs>',
        # Its own white ground: the page may be dark (the app has a dark theme), and the labels and
        # arrows are drawn dark for a light one.
        f'<rect x="0" y="0" width="{WIDTH}" height="{f.height}" rx="12" fill="#ffffff"/>',
    ]
    for label, x0, y0, x1, y1, anchor in f.frames:
        label_x = x0 + 4 if anchor == "start" else x1 - 4
        parts.append(f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" rx="12" fill="none" '
                     'stroke="#888" stroke-dasharray="6 4"/>')
        parts.append(f'<text x="{label_x}" y="{y0 - 6}" text-anchor="{anchor}" font-size="11">{escape(label)}</text>')
    legend = "".join(f'<tspan x="{f.legend_x}" dy="{0 if i == 0 else 14}">{escape(line)}</tspan>'
                     for i, line in enumerate(f.legend))
    parts.append(f'<text class="legend" x="{f.legend_x}" y="22" font-size="10" fill="#333">{legend}</text>')
    for a in f.arrows:
        points, (lx, ly, anchor) = _geometry(f, a)
        colour, marker, dash = (("#999", "arch-head-skip", ' stroke-dasharray="5 4"') if a.residual
                                else ("#555", "arch-head", ""))
        path = " ".join(f"{x:g},{y:g}" for x, y in points)
        # Each label on a white halo: a long shape reaches past its room, over the layer's dashed frame.
        parts.append(f'<g class="arrow" data-from="{a.tail}" data-to="{a.head}">'
                     f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.3"{dash} '
                     f'marker-end="url(#{marker})"/>'
                     f'<text x="{lx:g}" y="{ly:g}" text-anchor="{anchor}" font-size="10" fill="#333" {HALO}>'
                     f'{shape_text(edge_shape(a.hook, shapes))}</text></g>')
    parts.append(_strips_svg(f))
    parts += [_box_svg(box) for box in f.boxes.values()]
    parts.append("</svg>")
    return "".join(parts)
