"""The encoder-decoder figure as an SVG drawing, every arrow labelled with its live shape.

Pure Python (no streamlit, no torch) so it can be unit-tested: it reads the shapes a trace
recorded (``Trace.shapes``, hook name -> shape tuple) and the config, and returns SVG text, which
the explorer shows as an image (``st.image``, so no HTML of ours is put into the page unescaped).

Why a fixed drawing and not Graphviz: the boxes and arrows never change, only the labels do, yet
``st.graphviz_chart`` lays the figure out again in the browser after every slider move, which
dominated the time from a key press to the new table. The layout follows the paper's figure: encoder on the left, decoder on the right, read from the bottom up.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: importing core's package imports torch
    from core.config import TransformerConfig

# Boxes of the paper's figure: node id -> (label, fill colour).
NODES: dict[str, tuple[str, str]] = {
    "src": ("Inputs\\n(source token ids)", "#ffffff"),
    "src_emb": ("Input embedding\\n× √E", "#fde2e4"),
    "src_pos": ("Positional encoding", "#e2ecfd"),
    "src_add": ("+", "#ffffff"),
    "enc_attn": ("Multi-head\\nself-attention", "#fff4cc"),
    "enc_norm1": ("Add & Norm", "#f0f0f0"),
    "enc_ffn": ("Feed forward\\nE → d_ff → E", "#dff5e1"),
    "enc_norm2": ("Add & Norm", "#f0f0f0"),
    "tgt": ("Outputs, shifted right\\n(target token ids)", "#ffffff"),
    "tgt_emb": ("Output embedding\\n× √E", "#fde2e4"),
    "tgt_pos": ("Positional encoding", "#e2ecfd"),
    "tgt_add": ("+", "#ffffff"),
    "dec_self": ("Masked multi-head\\nself-attention", "#fff4cc"),
    "dec_norm1": ("Add & Norm", "#f0f0f0"),
    "dec_cross": ("Multi-head\\ncross-attention", "#fff4cc"),
    "dec_norm2": ("Add & Norm", "#f0f0f0"),
    "dec_ffn": ("Feed forward\\nE → d_ff → E", "#dff5e1"),
    "dec_norm3": ("Add & Norm", "#f0f0f0"),
    "linear": ("Linear\\nE → vocab_size", "#ede2fd"),
    "softmax": ("Softmax", "#ede2fd"),
    "probs": ("Output probabilities", "#ffffff"),
}

# Arrows: (from, to, hook whose shape labels the arrow, dashed = residual path).
EDGES: tuple[tuple[str, str, str, bool], ...] = (
    ("src", "src_emb", "src.tokens", False),
    ("src_emb", "src_add", "src.embed", False),
    ("src_pos", "src_add", "src.pos", False),
    ("src_add", "enc_attn", "src.sum", False),
    ("src_add", "enc_norm1", "src.sum", True),
    ("enc_attn", "enc_norm1", "enc.0.self_attn.out", False),
    ("enc_norm1", "enc_ffn", "enc.0.ffn_in", False),
    ("enc_norm1", "enc_norm2", "enc.0.ffn_in", True),
    ("enc_ffn", "enc_norm2", "enc.0.ffn.out", False),
    ("enc_norm2", "dec_cross", "memory", False),
    ("tgt", "tgt_emb", "tgt.tokens", False),
    ("tgt_emb", "tgt_add", "tgt.embed", False),
    ("tgt_pos", "tgt_add", "tgt.pos", False),
    ("tgt_add", "dec_self", "tgt.sum", False),
    ("tgt_add", "dec_norm1", "tgt.sum", True),
    ("dec_self", "dec_norm1", "dec.0.self_attn.out", False),
    ("dec_norm1", "dec_cross", "dec.0.cross_attn.q", False),
    ("dec_norm1", "dec_norm2", "dec.0.cross_attn.q", True),
    ("dec_cross", "dec_norm2", "dec.0.cross_attn.out", False),
    ("dec_norm2", "dec_ffn", "dec.0.ffn_in", False),
    ("dec_norm2", "dec_norm3", "dec.0.ffn_in", True),
    ("dec_ffn", "dec_norm3", "dec.0.ffn.out", False),
    ("dec_norm3", "linear", "dec.out", False),
    ("linear", "softmax", "logits", False),
    ("softmax", "probs", "probs", False),
)

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
# The drawing: fixed positions in SVG pixels (y grows downwards; the data flows upwards)

WIDTH, HEIGHT = 760, 760
MIN_WIDTH = 640  # drawn narrower, the 10 px labels would shrink below 8.4 px; a phone scrolls instead
NODE_W, NODE_H, POS_W, PLUS_R = 150, 34, 110, 11
ENC_X, DEC_X = 200, 540  # column centres
ENC_SKIP_X, DEC_SKIP_X = ENC_X - 95, DEC_X + 95  # where the residual paths run, beside each column
MEMORY_X, MEMORY_Y = 375, 310  # the encoder output's elbow on its way to the cross-attention

CENTRES: dict[str, tuple[int, int]] = {
    "probs": (DEC_X, 40), "softmax": (DEC_X, 100), "linear": (DEC_X, 160),
    "dec_norm3": (DEC_X, 236), "dec_ffn": (DEC_X, 296), "dec_norm2": (DEC_X, 356), "dec_cross": (DEC_X, 416),
    "dec_norm1": (DEC_X, 476), "dec_self": (DEC_X, 536),
    "tgt_add": (DEC_X, 606), "tgt_pos": (DEC_X + 135, 606), "tgt_emb": (DEC_X, 666), "tgt": (DEC_X, 726),
    "enc_norm2": (ENC_X, 356), "enc_ffn": (ENC_X, 416), "enc_norm1": (ENC_X, 476), "enc_attn": (ENC_X, 536),
    "src_add": (ENC_X, 606), "src_pos": (ENC_X - 135, 606), "src_emb": (ENC_X, 666), "src": (ENC_X, 726),
}
CLUSTERS = {"encoder": ("enc_norm2", "enc_attn"), "decoder": ("dec_norm3", "dec_self")}  # top and bottom box
HALO = 'stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"'  # white under the letters


def _half(name: str) -> tuple[int, int]:
    """Half the width and half the height of a node's shape."""
    if NODES[name][0] == "+":
        return PLUS_R, PLUS_R
    return (POS_W if name.endswith("_pos") else NODE_W) // 2, NODE_H // 2


def _label_lines(name: str) -> list[str]:
    """A box's label, one string per line (NODES marks a line break with a literal backslash-n)."""
    return NODES[name][0].split("\\n")


def _node_svg(name: str) -> str:
    label, fill = NODES[name]
    x, y = CENTRES[name]
    if label == "+":
        return (f'<circle cx="{x}" cy="{y}" r="{PLUS_R}" fill="{fill}" stroke="#333"/>'
                f'<text x="{x}" y="{y + 4}" text-anchor="middle" font-size="13">+</text>')
    w, h = _half(name)
    lines = _label_lines(name)
    text = "".join(f'<tspan x="{x}" dy="{0 if i == 0 else 13}">{escape(line)}</tspan>' for i, line in enumerate(lines))
    top = y + 4 - 6.5 * (len(lines) - 1)  # the lines' block centred on the box
    return (f'<rect x="{x - w}" y="{y - h}" width="{2 * w}" height="{2 * h}" rx="8" fill="{fill}" stroke="#333"/>'
            f'<text x="{x}" y="{top}" text-anchor="middle" font-size="11">{text}</text>')


def _edge_geometry(tail: str, head: str, residual: bool) -> tuple[list[tuple[float, float]], tuple[float, float, str]]:
    """The polyline of one arrow, and where its label goes: (x, y, text-anchor)."""
    (tx, ty), (hx, hy) = CENTRES[tail], CENTRES[head]
    (tw, th), (hw, hh) = _half(tail), _half(head)
    left = tx <= (ENC_X + DEC_X) / 2  # the encoder's column
    if residual:
        # Branch off the arrow that leaves ``tail`` upwards, run beside the column, enter the Add & Norm.
        branch = ty - th - 11
        skip = ENC_SKIP_X if left else DEC_SKIP_X
        side = hx - hw if left else hx + hw
        points = [(tx, branch), (skip, branch), (skip, hy), (side, hy)]
        mid = (branch + hy) / 2 + 3
        return points, ((skip - 6, mid, "end") if left else (skip + 6, mid, "start"))
    if tail.endswith("_pos"):  # beside the "+", horizontally
        start = tx + tw if tx < hx else tx - tw
        end = hx - hw if tx < hx else hx + hw
        return [(start, ty), (end, hy)], ((start + end) / 2, ty + 16, "middle")
    if head == "dec_cross" and tail == "enc_norm2":  # the encoder output, up and over to the decoder
        points = [(tx, ty - th), (tx, MEMORY_Y), (MEMORY_X, MEMORY_Y), (MEMORY_X, hy), (hx - hw, hy)]
        return points, ((tx + MEMORY_X) / 2 + 6, MEMORY_Y - 6, "middle")
    points = [(tx, ty - th), (hx, hy + hh)]  # straight up the column
    mid = (ty - th + hy + hh) / 2 + 3
    return points, ((tx + 6, mid, "start") if left else (tx - 6, mid, "end"))


def architecture_title(cfg: TransformerConfig) -> str:
    """What the figure shows, in words: its title, and the text a screen reader reads for it.

    With layers = 1 there is no other layer to pick from: "one of its 1 encoder layers" read wrong.
    """
    n = int(cfg.layers)
    drawn = ("its single encoder layer and its single decoder layer" if n == 1
             else f"one of its {n} encoder layers and one of its {n} decoder layers")
    return f"The Transformer: {drawn}, every arrow labelled with the shape of the tensor it carries"


# How the list under the figure names the boxes inside the two stacks. The drawing tells its
# several "+", "Add & Norm" and feed-forward boxes apart by where they stand; words must say which.
SPOKEN: dict[str, str] = {
    "src_pos": "positional encoding (source)",
    "src_add": "the encoder's + (embedding plus position)",
    "enc_attn": "encoder multi-head self-attention",
    "enc_norm1": "the encoder's first Add & Norm",
    "enc_ffn": "encoder feed forward (E → d_ff → E)",
    "enc_norm2": "the encoder's second Add & Norm",
    "tgt_pos": "positional encoding (target)",
    "tgt_add": "the decoder's + (embedding plus position)",
    "dec_self": "decoder masked multi-head self-attention",
    "dec_norm1": "the decoder's first Add & Norm",
    "dec_cross": "decoder multi-head cross-attention",
    "dec_norm2": "the decoder's second Add & Norm",
    "dec_ffn": "decoder feed forward (E → d_ff → E)",
    "dec_norm3": "the decoder's third Add & Norm",
}


# What an arrow into the cross-attention carries: it takes its two inputs in different roles.
ROLES = {("enc_norm2", "dec_cross"): " as the memory (its keys and values)",
         ("dec_norm1", "dec_cross"): " as its queries"}


def spoken_name(name: str) -> str:
    """A box's name for the list under the figure: SPOKEN's wording, or its label on one line."""
    if name in SPOKEN:
        return SPOKEN[name]
    label = " ".join(_label_lines(name))
    return label[0].lower() + label[1:]


def architecture_steps(shapes: dict[str, tuple[int, ...]]) -> list[str]:
    """The figure in words, one sentence per arrow, in the order the data flows.

    A screen reader gets only the image's alt text; this list says what the drawing shows: which
    box feeds which, and the shape on each arrow. It is built from the same EDGES as the SVG.
    """
    steps = []
    for tail, head, hook, residual in EDGES:
        path = " around the block (residual path)" if residual else ""
        steps.append(f"From {spoken_name(tail)}{path} to {spoken_name(head)}{ROLES.get((tail, head), '')}: "
                     f"{shape_text(edge_shape(hook, shapes))}")
    return steps


def architecture_svg(cfg: TransformerConfig, shapes: dict[str, tuple[int, ...]]) -> str:
    """The encoder-decoder as SVG text, arrows labelled with live shapes.

    One encoder and one decoder layer are drawn, inside dashed boxes marked '× layers'; the labels
    are the shapes recorded in layer 0 (every layer of a stack has the same shapes). Each arrow is
    a group with its two ends in data attributes, so tests can read the figure back.
    """
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" font-family="Helvetica, Arial, sans-serif">',  # an image: no page fonts
        f'<title>{escape(architecture_title(cfg))}</title>',
        '<defs>'
        '<marker id="arch-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
        '<marker id="arch-head-skip" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#999"/></marker>'
        '</defs>',
        # Its own white ground: the page may be dark (the app has a dark theme), and the labels and
        # arrows are drawn dark for a light one.
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" rx="12" fill="#ffffff"/>',
    ]
    for side, (top, bottom) in CLUSTERS.items():
        # Wide enough on the residual side to hold the residual arrows' labels too.
        x0, x1 = (ENC_X - 150, ENC_X + 118) if side == "encoder" else (DEC_X - 118, DEC_X + 150)
        y0, y1 = CENTRES[top][1] - NODE_H // 2 - 14, CENTRES[bottom][1] + NODE_H // 2 + 14
        label_x, anchor = (x0 + 4, "start") if side == "encoder" else (x1 - 4, "end")
        parts.append(f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" rx="12" fill="none" '
                     'stroke="#888" stroke-dasharray="6 4"/>')
        parts.append(f'<text x="{label_x}" y="{y0 - 6}" text-anchor="{anchor}" font-size="11">'
                     f'{side.capitalize()} layer × {int(cfg.layers)}</text>')
    for tail, head, hook, residual in EDGES:
        points, (lx, ly, anchor) = _edge_geometry(tail, head, residual)
        colour, marker, dash = (("#999", "arch-head-skip", ' stroke-dasharray="5 4"') if residual
                                else ("#555", "arch-head", ""))
        path = " ".join(f"{x:g},{y:g}" for x, y in points)
        # Each label on a white halo (its outline, painted under its letters): a long shape, such as
        # (64, 4096, 12288), reaches past its room, and the layer's dashed frame ran through its digits.
        parts.append(f'<g class="arrow" data-from="{tail}" data-to="{head}">'
                     f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.3"{dash} '
                     f'marker-end="url(#{marker})"/>'
                     f'<text x="{lx:g}" y="{ly:g}" text-anchor="{anchor}" font-size="10" fill="#333" {HALO}>'
                     f'{shape_text(edge_shape(hook, shapes))}</text></g>')
    parts += [_node_svg(name) for name in NODES]
    parts.append("</svg>")
    return "".join(parts)
