"""The encoder-decoder figure as a Graphviz DOT string, every arrow labelled with its live shape.

Pure Python (no streamlit, no torch) so it can be unit-tested: it reads the shapes a trace
recorded (``Trace.shapes``, hook name -> shape tuple) and the config, and returns text that
``st.graphviz_chart`` draws in the browser, so no system graphviz is needed.
"""

from __future__ import annotations

from core import TransformerConfig

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


def architecture_dot(cfg: TransformerConfig, shapes: dict[str, tuple[int, ...]]) -> str:
    """A DOT digraph of the encoder-decoder, arrows labelled with live shapes.

    One encoder and one decoder layer are drawn, inside boxes marked '× layers'; the labels are
    the shapes recorded in layer 0 (every layer of a stack has the same shapes).
    """
    lines = [
        "digraph transformer {",
        '  graph [rankdir=BT, fontname="Helvetica", fontsize=11, nodesep=0.35, ranksep=0.3];',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9, color="#555555"];',
    ]

    def node(name: str) -> str:
        label, fill = NODES[name]
        shape = ', shape=circle, width=0.3, fixedsize=true' if label == "+" else ""
        return f'    {name} [label="{label}", fillcolor="{fill}"{shape}];'

    lines.append("  subgraph cluster_encoder {")
    lines.append(f'    label="Encoder layer × {int(cfg.layers)}"; style="rounded,dashed"; color="#888888";')
    lines += [node(n) for n in ("enc_attn", "enc_norm1", "enc_ffn", "enc_norm2")]
    lines.append("  }")
    lines.append("  subgraph cluster_decoder {")
    lines.append(f'    label="Decoder layer × {int(cfg.layers)}"; style="rounded,dashed"; color="#888888";')
    lines += [node(n) for n in ("dec_self", "dec_norm1", "dec_cross", "dec_norm2", "dec_ffn", "dec_norm3")]
    lines.append("  }")
    lines += [node(n) for n in ("src", "src_emb", "src_pos", "src_add", "tgt", "tgt_emb", "tgt_pos", "tgt_add",
                                "linear", "softmax", "probs")]
    for tail, head, hook, residual in EDGES:
        label = shape_text(edge_shape(hook, shapes))
        style = ', style=dashed, color="#999999"' if residual else ""
        lines.append(f'  {tail} -> {head} [label=" {label}"{style}];')
    lines.append("}")
    return "\n".join(lines)
