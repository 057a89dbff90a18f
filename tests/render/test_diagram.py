"""render.diagram: the SVG figure of every family, its arrows labelled with live shapes, its title and its words."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest

from core import TransformerConfig, trace
from core.config import DEEPSEEK_V2_LITE, DEEPSEEK_V3, MISTRAL_7B, TINY_GPT, TINY_LLAMA, TINY_MLA, TINY_MOE, TINY_T5
from render.diagram import (STRIP_ROW, WIDTH, _half, architecture_steps, architecture_svg, architecture_title,
                            edge_shape, figure, shape_text, strips_top)

CFG = TransformerConfig(N=3, M=8, M_target=6, E=12, nhead=3, vocab_size=20, layers=2)
EDGES = [(a.tail, a.head, a.hook, a.residual) for a in figure(CFG).arrows]
SVG = "{http://www.w3.org/2000/svg}"  # ElementTree names SVG tags with their namespace


@pytest.fixture(scope="module")
def t():
    return trace(CFG)


def arrows(svg: str) -> dict[tuple[str, str], str]:
    """(from, to) -> label of every arrow group in the figure."""
    root = ElementTree.fromstring(svg)
    groups = root.findall(f"{SVG}g[@class='arrow']")
    return {(g.get("data-from"), g.get("data-to")): g.find(f"{SVG}text").text for g in groups}


FAMILIES = {
    "decoder-only": TransformerConfig(arch="decoder-only", N=2, M=5, E=12, nhead=3, vocab_size=20, layers=2),
    "encoder-only": TransformerConfig(arch="encoder-only", N=2, M=5, E=12, nhead=3, vocab_size=20, layers=1,
                                      positional="none"),
    "llama-like": TransformerConfig(arch="decoder-only", N=2, M=5, E=16, nhead=4, nhead_kv=2, vocab_size=20,
                                    layers=2, positional="rope", norm="rmsnorm", activation="swiglu", norm_first=True,
                                    bias=False),
    "pre-norm encoder-decoder, MQA": TransformerConfig(N=2, M=5, M_target=4, E=16, nhead=4, nhead_kv=1, vocab_size=20,
                                                       layers=2, norm_first=True, positional="learned"),
}


def test_architecture_svg_labels_every_arrow_with_the_live_shape(t):
    svg = architecture_svg(CFG, t.shapes)
    labels = arrows(svg)  # parses: the figure is well-formed XML
    assert list(labels) == [(tail, head) for tail, head, _, _ in EDGES]
    for tail, head, hook, _ in EDGES:
        assert labels[(tail, head)] == shape_text(edge_shape(hook, t.shapes))
    assert labels[("src", "src_emb")] == "(3, 8)"
    assert labels[("enc_norm2", "dec_cross")] == "(3, 8, 12)"  # memory: (N, M, E)
    assert labels[("dec_norm1", "dec_cross")] == "(3, 6, 12)"  # decoder stream: (N, M_target, E)
    assert labels[("softmax", "probs")] == "(3, 6, 20)"
    assert "Encoder layer × 2" in svg and "Decoder layer × 2" in svg


def test_architecture_svg_keeps_every_shape_inside_the_picture(t):
    """Every box, circle and line lies within the view box, at any config."""
    root = ElementTree.fromstring(architecture_svg(CFG, t.shapes))
    HEIGHT = figure(CFG).height
    for rect in root.iter(f"{SVG}rect"):
        x, y, w, h = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
        assert 0 <= x and x + w <= WIDTH and 0 <= y and y + h <= HEIGHT
    for line in root.iter(f"{SVG}polyline"):
        for point in line.get("points").split():
            x, y = map(float, point.split(","))
            assert 0 <= x <= WIDTH and 0 <= y <= HEIGHT


def test_every_arrow_label_sits_on_a_white_halo(t):
    """A long shape reaches past its room beside the residual arrows, and the layer's dashed frame ran
    through its digits: every arrow's label is outlined in white, painted under its letters."""
    root = ElementTree.fromstring(architecture_svg(CFG, t.shapes))
    arrows = [g for g in root.iter(f"{SVG}g") if g.get("class") == "arrow"]
    labels = [text for arrow in arrows for text in arrow.iter(f"{SVG}text")]
    assert len(labels) == len(EDGES)
    for text in labels:
        halo = (text.get("stroke"), text.get("paint-order"), float(text.get("stroke-width")))
        assert halo == ("#ffffff", "stroke", 3)


@pytest.mark.parametrize("layers, drawn", [
    (1, "its single encoder layer and its single decoder layer"),
    (2, "one of its 2 encoder layers and one of its 2 decoder layers"),
])
def test_the_figure_s_title_counts_its_layers_in_plain_english(layers, drawn):
    """The title is also the image's alt text. With one layer per stack "one of its 1 encoder layers"
    read wrong: there is only the one."""
    cfg = TransformerConfig(N=2, M=3, E=4, nhead=2, vocab_size=10, layers=layers)
    title = f"The Transformer: {drawn}, every arrow labelled with the shape of the tensor it carries"
    assert architecture_title(cfg) == title
    assert f"<title>{title}</title>" in architecture_svg(cfg, trace(cfg, shape_only=True).shapes)


def test_architecture_svg_works_shape_only():
    big = TransformerConfig(N=64, M=2048, E=12288, nhead=96, vocab_size=50257, layers=2)
    labels = arrows(architecture_svg(big, trace(big, shape_only=True).shapes))
    assert labels[("softmax", "probs")] == "(64, 2048, 50257)"


def test_the_figure_in_words_has_one_sentence_per_arrow_with_the_same_shape(t):
    """The list under the figure is what a screen reader gets: each arrow in the figure's order,
    its two ends named so they cannot be mistaken for one another, and the shape it carries."""
    labels = list(arrows(architecture_svg(CFG, t.shapes)).values())
    steps = architecture_steps(CFG, t.shapes)
    assert len(steps) == len(EDGES) == len(labels)
    for step, label in zip(steps, labels):
        assert step.startswith("From ") and step.endswith(": " + label)
    assert steps[0] == "From inputs (source token ids) to input embedding × √E: (3, 8)"
    assert ("From the encoder's second Add & Norm to decoder multi-head cross-attention as the memory "
            "(its keys and values): (3, 8, 12)") in steps
    assert ("From the decoder's first Add & Norm to decoder multi-head cross-attention as its queries: "
            "(3, 6, 12)") in steps
    assert steps[-1] == "From softmax to output probabilities: (3, 6, 20)"
    drawn = [" ".join(box.lines).lower() for box in figure(CFG).boxes.values()]
    drawn_alike = {label for label in drawn if drawn.count(label) > 1}  # "+", "add & norm", ...
    assert {"+", "add & norm", "positional encoding"} <= drawn_alike
    for step in steps:  # told apart in the drawing by where they stand; never bare in words
        ends = step[len("From "):step.rindex(": ")].replace(" around the block (residual path)", "").split(" to ")
        assert not any(end.lower() in drawn_alike for end in ends), step


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_family_s_figure_labels_its_arrows_with_live_shapes_inside_the_picture(name):
    cfg = FAMILIES[name]
    tt = trace(cfg)
    f = figure(cfg)
    svg = architecture_svg(cfg, tt.shapes)
    labels = arrows(svg)
    assert list(labels) == [(a.tail, a.head) for a in f.arrows]
    assert list(labels.values()) == [shape_text(edge_shape(a.hook, tt.shapes)) for a in f.arrows]
    assert len(architecture_steps(cfg, tt.shapes)) == len(f.arrows)
    assert {a.tail for a in f.arrows} | {a.head for a in f.arrows} == set(f.boxes)  # no box left unconnected
    root = ElementTree.fromstring(svg)
    for rect in root.iter(f"{SVG}rect"):
        x, y, w, h = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
        assert 0 <= x and x + w <= WIDTH and 0 <= y and y + h <= f.height
    legend = "".join(root.find(f"{SVG}text[@class='legend']").itertext())
    for line in f.legend:
        assert line in legend


def test_a_single_stack_has_no_encoder_decoder_parts():
    for name in ("decoder-only", "encoder-only", "llama-like"):
        f = figure(FAMILIES[name])
        words = " ".join(" ".join(b.lines) + " " + b.spoken for b in f.boxes.values())
        assert "cross" not in words.lower() and "shifted right" not in words and "√E" not in words
        assert len({b.x for b in f.boxes.values() if not b.side}) == 1  # one column
    assert [label for label, *_ in figure(FAMILIES["decoder-only"]).frames] == ["Layer × 2"]
    assert "Masked multi-head" in figure(FAMILIES["decoder-only"]).boxes["dec_self"].lines
    assert "Multi-head" in figure(FAMILIES["encoder-only"]).boxes["enc_attn"].lines


def test_pre_norm_puts_a_norm_before_each_sub_layer_and_a_final_norm_after_the_stack():
    f = figure(FAMILIES["llama-like"])
    into = {a.head: a.tail for a in f.arrows if not a.residual and not f.boxes[a.tail].side}
    assert f.boxes[into["dec_self"]].lines == ("RMSNorm",) and f.boxes[into["dec_ffn"]].lines == ("RMSNorm",)
    assert f.boxes[into["linear"]].lines == ("Final RMSNorm",)
    residual = [(a.tail, a.head) for a in f.arrows if a.residual]
    assert [f.boxes[head].kind for _, head in residual] == ["plus", "plus"]  # the sum after each sub-layer
    post = figure(FAMILIES["decoder-only"])
    assert [post.boxes[a.head].lines for a in post.arrows if a.residual] == [("Add & Norm",), ("Add & Norm",)]
    assert "dec_final" not in post.boxes
    encdec = figure(FAMILIES["pre-norm encoder-decoder, MQA"])
    assert {"enc_final", "dec_final"} <= set(encdec.boxes)
    assert [a for a in encdec.arrows if a.head == "dec_cross" and a.role.startswith(" as the memory")][0].tail \
        == "enc_final"


def test_gqa_and_mqa_say_which_query_heads_share_a_k_v_head():
    llama = figure(FAMILIES["llama-like"])
    assert "K/V: nhead_kv = 2 heads shared by groups of 4/2 = 2 query heads (GQA)" in llama.legend
    assert llama.boxes["dec_self"].lines == ("Masked self-attention", "GQA: 2 K/V for 4 Q")
    mqa = figure(FAMILIES["pre-norm encoder-decoder, MQA"])
    assert "K/V: 1 head shared by all nhead = 4 query heads (MQA)" in mqa.legend
    assert "Attention: nhead = 3 heads, each with its own K and V (MHA)" in figure(CFG).legend


def test_the_figure_names_rmsnorm_swiglu_and_rope_where_they_are():
    cfg = FAMILIES["llama-like"]
    f = figure(cfg)
    assert f.boxes["dec_ffn"].lines == ("Feed forward, SwiGLU", "E → d_ff (gate · up) → E")
    [rope] = [a for a in f.arrows if a.tail == "tgt_rope"]
    assert rope.head == "dec_self" and edge_shape(rope.hook, trace(cfg).shapes) == (5, 4)  # (M, d_k)
    assert "tgt_pos" not in f.boxes and "tgt_add" not in f.boxes  # RoPE adds nothing to the embeddings
    none = figure(FAMILIES["encoder-only"])
    assert not any(b.side for b in none.boxes.values())
    assert "Positions: none (nothing tells the positions apart)" in none.legend


@pytest.mark.parametrize("arch, title", [
    ("decoder-only", "The decoder-only Transformer: one of its 2 layers"),
    ("encoder-only", "The encoder-only Transformer: its single layer"),
])
def test_a_single_stack_s_title_counts_its_layers(arch, title):
    cfg = TransformerConfig(arch=arch, layers=2 if arch == "decoder-only" else 1)
    assert architecture_title(cfg) == f"{title}, every arrow labelled with the shape of the tensor it carries"


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only", "encoder-only"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("positional", ["sinusoidal", "learned", "rope", "none"])
def test_no_two_boxes_of_any_family_overlap_and_the_legend_clears_them(arch, norm_first, positional):
    """Every part a learner can toggle moves boxes: none may sit on another, nor under the legend's lines."""
    cfg = TransformerConfig(arch=arch, norm_first=norm_first, positional=positional, E=16, nhead=4, nhead_kv=2)
    f = figure(cfg)

    def extent(box):
        w, h = (11, 11) if box.kind == "plus" else ((55 if box.side else 75), 17)
        return box.x - w, box.y - h, box.x + w, box.y + h

    boxes = [extent(b) for b in f.boxes.values()]
    for i, (ax0, ay0, ax1, ay1) in enumerate(boxes):
        assert 0 <= ax0 and ax1 <= WIDTH and 0 <= ay0 and ay1 <= f.height
        for bx0, by0, bx1, by1 in boxes[i + 1:]:
            assert ax1 <= bx0 or bx1 <= ax0 or ay1 <= by0 or by1 <= ay0, (cfg, (ax0, ay0), (bx0, by0))
    longest = max(map(len, f.legend)) * 5.6  # 10 px Helvetica, about, per character
    legend = (f.legend_x, 10, f.legend_x + longest, 22 + 14 * (len(f.legend) - 1) + 4)
    assert legend[2] <= WIDTH
    for x0, y0, x1, y1 in boxes:
        assert x1 <= legend[0] or legend[2] <= x0 or y1 <= legend[1] or legend[3] <= y0, (cfg, (x0, y0))


# --- The new parts: experts, latent attention, the window, T5's shared bias table ---------------------------------

def _parts(cfg, shape_only=False):
    """The figure, its SVG's arrows (in order, with their labels), and its steps, for one config."""
    tt = trace(cfg, shape_only=shape_only)
    f = figure(cfg)
    root = ElementTree.fromstring(architecture_svg(cfg, tt.shapes))
    groups = [(g.get("data-from"), g.get("data-to"), g.find(f"{SVG}text").text)
              for g in root.findall(f"{SVG}g[@class='arrow']")]
    return f, tt, root, groups, architecture_steps(cfg, tt.shapes)


def _lines(f, name):
    return f.boxes[name].lines


def test_a_mixture_of_experts_draws_its_router_experts_shared_expert_and_weighted_sum():
    f, tt, root, groups, steps = _parts(TINY_MOE)
    assert _lines(f, "dec_router") == ("Router", "E → n_experts = 8")
    assert _lines(f, "dec_experts") == ("8 experts, top_k = 2 filled", "SwiGLU: E → d_ff_expert → E")
    assert f.boxes["dec_experts"].cells == (True, True, False, False, False, False, False, False)  # top_k = 2
    assert _lines(f, "dec_shared") == ("Shared expert × 1", "every token, E → E")
    assert _lines(f, "dec_combine") == ("Weighted sum", "of the top_k = 2 + shared")
    assert "dec_ffn" not in f.boxes
    cells = root.findall(f".//{SVG}rect[@class='expert chosen']")
    assert len(cells) == 2 and len(root.findall(f".//{SVG}rect[@class='expert']")) == 6
    labels = {(a, b): text for a, b, text in groups}
    # Drawn from layer 1, the first with experts; T_e tokens reach expert 0 in this seeded pass.
    assert labels[("dec_router", "dec_experts")] == shape_text(tt.shapes["dec.1.ffn.expert0.in"])
    assert labels[("dec_router", "dec_combine")] == "(2, 8, 2)"  # (N, M, top_k)
    assert labels[("dec_shared", "dec_combine")] == "(2, 8, 16)"
    assert labels[("dec_norm2", "dec_shared")] == "(2, 8, 16)"
    assert "Layer 0 keeps a dense FFN (first_dense_layers = 1); drawn: layer 1" in f.legend
    assert "FFN: 8 SwiGLU experts; a router picks top_k = 2 for each token" in f.legend
    assert "Shared: 1 expert every token passes through, beside the chosen" in f.legend
    assert [label for label, *_ in f.frames] == ["Layer × 3, layer 0 with a dense FFN"]
    [strip] = f.strips
    assert strip.marks == (False, True, True) and strip.title.startswith("Layers 0 → 2: filled with experts")
    assert len(root.findall(f".//{SVG}rect[@class='layer marked']")) == 2
    assert len(steps) == len(groups) == len(f.arrows)
    assert ("From the decoder's router (E → n_experts = 8, top_k = 2) to the weighted sum of the chosen experts' "
            "outputs and the shared experts' output as each token's top_k weights: (2, 8, 2)") in steps


def test_deepseek_v3_draws_its_experts_and_latent_attention_shape_only():
    f, tt, root, groups, steps = _parts(DEEPSEEK_V3, shape_only=True)
    labels = {(a, b): text for a, b, text in groups}
    assert _lines(f, "dec_experts") == ("256 experts, top_k = 8 filled", "SwiGLU: E → d_ff_expert → E")
    assert f.boxes["dec_experts"].cells == (True,) * 8 + (False,) * 8  # 16 cells drawn of 256, then "…"
    assert f.boxes["dec_experts"].undrawn == 240
    assert "Layers 0 to 2 keep a dense FFN (first_dense_layers = 3); drawn: layer 3" in f.legend
    assert [label for label, *_ in f.frames] == ["Layer × 61, layers 0 to 2 with a dense FFN"]
    assert _lines(f, "dec_q_down") == ("Query down W_DQ", "E → q_lora_rank = 1536")
    assert _lines(f, "dec_latent") == ("Latent c_KV, cached", "kv_lora_rank = 512")
    assert labels[("dec_kv_down", "dec_latent")] == "(1, 4096, 512)"  # (N, M, kv_lora_rank)
    assert labels[("dec_kv_down", "dec_k_rope")] == "(1, 4096, 64)"  # (N, M, rope_head_dim)
    assert labels[("dec_q_down", "dec_q_up")] == "(1, 4096, 1536)"  # (N, M, q_lora_rank)
    assert [text for a, b, text in groups if (a, b) == ("dec_kv_up", "dec_self")] == [
        "(1, 128, 4096, 192)", "(1, 128, 4096, 128)"]  # K (N, nhead, M, d_nope + d_rope), V (N, nhead, M, d_v)
    assert "Cache: a latent of kv_lora_rank = 512 + rotary key of 64 a token" in f.legend
    assert [s.marks.count(True) for s in f.strips] == [58]
    assert len(steps) == len(groups)


def test_latent_attention_draws_its_projections_around_the_latent_and_the_shared_rotary_key():
    f, tt, root, groups, steps = _parts(TINY_MLA)
    assert _lines(f, "dec_self") == ("Masked self-attention", "MLA: 2 heads")
    assert _lines(f, "dec_kv_down") == ("Down W_DKV", "E → d_c + rope_head_dim")
    assert _lines(f, "dec_kv_up") == ("Up W_UKV", "d_c → each head's K, V")
    assert _lines(f, "dec_k_rope") == ("Rotary key, cached", "shared by all heads")
    assert _lines(f, "dec_q_up") == ("Query up W_UQ", "q_lora_rank → nhead · d_qk")
    assert _lines(f, "tgt_rope") == ("RoPE angles", "turn rope_head_dim")
    pairs = [(a, b) for a, b, _ in groups]
    for pair in [("dec_norm1", "dec_kv_down"), ("dec_kv_down", "dec_latent"), ("dec_latent", "dec_kv_up"),
                 ("dec_kv_down", "dec_k_rope"), ("tgt_rope", "dec_k_rope"), ("dec_k_rope", "dec_kv_up"),
                 ("dec_norm1", "dec_q_down"), ("dec_q_down", "dec_q_up"), ("dec_q_up", "dec_self")]:
        assert pair in pairs, pair
    assert ("tgt_rope", "dec_self") not in pairs  # RoPE turns the shared key here, not a head's whole d_k
    labels = {(a, b): text for a, b, text in groups}
    assert labels[("dec_kv_down", "dec_latent")] == "(2, 8, 8)" and labels[("tgt_rope", "dec_k_rope")] == "(8, 4)"
    assert "Attention: MLA, nhead = 2 heads' K and V made back from one latent" in f.legend
    assert "Query: compressed too, E → q_lora_rank = 6 → heads" in f.legend
    lite = figure(TINY_MLA.replace(q_lora_rank=0))
    assert "dec_q_down" not in lite.boxes and _lines(lite, "dec_q") == ("Query W_Q", "E → nhead · d_qk")
    assert "Query: not compressed (q_lora_rank = 0), E → heads in one matrix" in lite.legend
    assert ("From the up-projection W_UKV (kv_lora_rank → nhead · (nope_head_dim + v_head_dim)) to decoder masked "
            "multi-head self-attention (MLA, 2 heads) as every head's V: (2, 2, 8, 4)") in steps


def test_a_window_says_which_layers_it_reaches():
    f, tt, root, groups, steps = _parts(MISTRAL_7B, shape_only=True)
    assert _lines(f, "dec_self") == ("Masked self-attention", "GQA: 8 K/V for 32 Q", "window W = 4096")
    assert "Window: each query sees the last W = 4,096 positions, in every layer" in f.legend
    assert [s.marks for s in f.strips] == [(True,) * 32]
    alternating = TINY_LLAMA.replace(window=3, global_every=2, layers=4)
    g = figure(alternating)
    assert _lines(g, "dec_self")[2] == "window W = 3 or full"
    assert "Window: W = 3; every 2nd layer (1, 3, …) attends in full" in g.legend
    [strip] = g.strips
    assert strip.marks == (True, False, True, False)
    assert strip.title == "Layers 0 → 3: filled windowed (W = 3), empty full"
    assert any("through a window of W = 3 positions" in step for step in architecture_steps(
        alternating, trace(alternating).shapes))


def test_one_layer_one_k_v_head_and_a_window_of_one_are_said_in_the_singular():
    cfg = TransformerConfig(arch="decoder-only", N=1, M=3, E=8, nhead=4, nhead_kv=1, layers=1, window=1)
    f = figure(cfg)
    assert "Window: each query sees the last W = 1 position, in every layer" in f.legend
    assert [s.title for s in f.strips] == ["Layer 0: filled windowed (W = 1), empty full"]
    assert f.boxes["dec_self"].spoken.endswith("(MQA: 1 K/V head for 4 query heads) through a window of W = 1 "
                                               "position")
    assert figure(FAMILIES["llama-like"]).boxes["dec_self"].spoken.endswith("(GQA: 2 K/V heads for 4 query heads)")


@pytest.mark.parametrize("cfg", [CFG, *FAMILIES.values(), TINY_LLAMA, TINY_GPT])
def test_dense_full_attention_configs_draw_none_of_the_new_parts(cfg):
    f = figure(cfg)
    new = {"router", "experts", "combine", "shared", "q_down", "q_up", "q", "kv_down", "latent", "kv_up", "k_rope"}
    assert not {name.split("_", 1)[1] for name in f.boxes if "_" in name} & new
    assert not f.strips
    words = " ".join(f.legend) + " ".join(" ".join(b.lines) for b in f.boxes.values())
    for word in ("expert", "Router", "latent", "MLA", "window", "dense FFN"):
        assert word not in words, word


def test_t5_draws_its_relative_bias_table_once_per_stack_shared_by_the_layers():
    f = figure(TINY_T5)
    assert _lines(f, "src_rel") == _lines(f, "tgt_rel") == ("Relative bias", "layer 0's, shared")
    assert "one table in the encoder's first layer, shared by all its layers" in f.boxes["src_rel"].spoken
    assert [(a.tail, a.head) for a in f.arrows if a.tail.endswith("_rel")] == [("src_rel", "enc_attn"),
                                                                                ("tgt_rel", "dec_self")]


@pytest.mark.parametrize("cfg", [TINY_MOE, TINY_MLA, DEEPSEEK_V3, DEEPSEEK_V2_LITE, TINY_MOE.replace(norm_first=False),
                                 TINY_MLA.replace(norm_first=False),
                                 TINY_MOE.replace(arch="encoder-only", positional="learned", n_shared_experts=0),
                                 TINY_LLAMA.replace(window=3, global_every=2), TINY_MLA.replace(arch="encoder-only"),
                                 TINY_MOE.replace(window=3, global_every=3)])
def test_the_new_parts_overlap_nothing_and_stay_inside_the_picture(cfg):
    f = figure(cfg)

    def extent(box):
        w, h = _half(box)
        up = 8 if box.kind == "experts" else 0  # the stack's boxes behind it
        return box.x - w, box.y - h - up, box.x + w + up, box.y + h

    boxes = [extent(b) for b in f.boxes.values()]
    for i, (ax0, ay0, ax1, ay1) in enumerate(boxes):
        assert 0 <= ax0 and ax1 <= WIDTH and 0 <= ay0 and ay1 <= f.height
        for bx0, by0, bx1, by1 in boxes[i + 1:]:
            assert ax1 <= bx0 or bx1 <= ax0 or ay1 <= by0 or by1 <= ay0, ((ax0, ay0), (bx0, by0))
    longest = max(map(len, f.legend + tuple(s.title for s in f.strips))) * 5.6
    bottom = strips_top(f) + STRIP_ROW * len(f.strips)
    assert f.legend_x + longest <= WIDTH
    for x0, y0, x1, y1 in boxes:
        assert x1 <= f.legend_x or y0 >= bottom, (x0, y0)
    for label, x0, y0, x1, y1, _ in f.frames:
        assert 0 <= x0 and x1 <= WIDTH
        assert all(x0 < b.x < x1 and y0 < b.y < y1 for b in f.boxes.values()
                   if b.side and b.name.split("_", 1)[1] in {"experts", "shared", "kv_down", "latent", "kv_up",
                                                             "k_rope"})
