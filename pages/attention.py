"""Attention: one head's weights as a heatmap, for any layer, kind and sequence, with its mask; and which
query heads share a K/V head.

The weights come from the cached live trace; core.views cuts one (capped) map out of it, so a
huge M still draws at most MAX_POSITIONS x MAX_POSITIONS cells. A config over the memory budget
has no live trace, so its maps come from a slim pass (core.slim) when that fits. No tensor maths here.
"""

import streamlit as st

from core import human_bytes
from core.slim import slim_bytes, slim_estimate
from core.tokens import PAD_TOKEN
from core.trace import padded_positions
from core.views import (MAX_POSITIONS, attention_kinds, attention_map, kv_sharing, slim_attention_maps,
                        weights_row)
from render.charts import attention_spec, full_width, mask_spec
from render.diagram import shape_text
from render.heads import MAX_GROUP_ROWS, MAX_HEADS_DRAWN, kv_groups_frame, kv_heads_spec
from render.latent import head_note, latent_note
from render.window import layer_pair, pair_caption, window_mask_note
from render.tables import numbers_frame
from render.words import counted
from ui.compute.trace_cache import GATE
from ui.compute.traces import cached_shapes, cached_trace, over_budget, shape_only_banner, slim_refusal
from ui.look.charts import drawn_at_this_link, map_box, show_chart, show_numbers
from ui.look.theme import theme
from ui.sections.values import text_pass, token_map, weights_words
from ui.sections.your_text import text_box
from ui.server.guard import guard
from ui.server.streamlit_internals import leave_legacy_pages_mode
from ui.sidebar.config import forget_link_warnings, this_run

leave_legacy_pages_mode()  # before anything is drawn: see ui/server/streamlit_internals.py

# Narrowest boxes (px), so small maps' captions read and the mask still sits beside the weights (docs/layout.md).
WEIGHTS_BOX, MASK_BOX = 290, 244


def key_span(first: int, last: int) -> str:
    """'key 7' or 'keys 5 to 7': one padding key is no range."""
    return f"key {first}" if first == last else f"keys {first} to {last}"


def last_of(n: int) -> str:
    """'the last 2 of' the positions, or 'the last of' them when only one is padding."""
    return "the last of" if n == 1 else f"the last {n} of"


def mask_note(kind: str, cfg, item: int | None = None, padding: int | None = None, layer: int | None = None) -> str:
    """What the mask beside the weights is, and where in this config's batch it hides anything. ``item``: the batch
    item on show (the padded one gets a note on its blocked keys). ``padding``: over a learner's text, how many of
    that sequence's keys are padding; None for the seeded batch."""
    if padding is not None and kind not in ("decoder masked self-attention", "causal self-attention"):
        return text_mask_note(kind, cfg, item or 0, padding)
    if kind == "causal self-attention" and cfg.window and layer is not None:
        return window_mask_note(cfg, layer)
    if kind == "decoder masked self-attention":
        return ("Causal mask: True above the diagonal, so target position i sees positions 0..i and nothing "
                "after. The diagonal stays visible.")
    if kind == "causal self-attention":
        return ("Causal mask: True above the diagonal, so position i sees positions 0..i and nothing after: each "
                "position's logits predict the next token, which it must not see. The diagonal stays visible. "
                + ("Each shorter line of your text is padded at its end, after every token it has, so this mask "
                   "already hides the padding from them: it is the one mask." if padding is not None and cfg.N > 1
                   else
                   "A decoder-only model pads nothing here, so this is its one mask."))
    padded = padded_positions(cfg)
    if not padded:
        where = (f"The trace pads the last quarter of the last sequence only when N > 1 and M ≥ 4; with N = {cfg.N} "
                 f"and M = {cfg.M} no token is padding, so this mask hides nothing.")
    elif cfg.M - padded >= MAX_POSITIONS:  # all of it past the drawn keys
        where = (f"The trace pads {last_of(padded)} the M = {cfg.M} positions of the last sequence (batch item "
                 f"{cfg.N - 1}), {key_span(cfg.M - padded, cfg.M - 1)}: past the first {MAX_POSITIONS} keys drawn "
                 "here, so a shorter M shows them.")
    elif item == cfg.N - 1:
        where = (f"The trace pads {last_of(padded)} the M = {cfg.M} positions of the last sequence, the batch "
                 f"item shown: {key_span(cfg.M - padded, cfg.M - 1)} {'is' if padded == 1 else 'are'} blocked. The "
                 "other batch items have no padding.")
    else:
        where = (f"The trace pads {last_of(padded)} the M = {cfg.M} positions of the last sequence, so pick the "
                 f"last batch item ({cfg.N - 1}) to see it.")
    if kind == "cross-attention":
        return ("Target queries look at source keys (M_target rows, M columns); the source's padding keys are "
                "hidden, as in the encoder. " + where)
    if kind == "self-attention":  # encoder-only: one sequence, no source or target
        return ("Key padding mask: the padding tokens (id 0) are hidden from every query; every other key is seen by "
                "every query, before and after it (no causal mask). " + where)
    return "Key padding mask: the source's padding tokens (id 0) are hidden from every query. " + where


def text_mask_note(kind: str, cfg, item: int, padding: int) -> str:
    """The key padding mask over a learner's text: each line is one sequence, the shorter ones padded to M."""
    what = ("Target queries look at source keys (M_target rows, M columns); the source's padding keys are hidden."
            if kind == "cross-attention" else
            "Key padding mask: the padding keys are hidden from every query; every other key is seen by every "
            "query, before and after it (no causal mask).")
    if cfg.N == 1:
        where = "Your text is one line, so no key is padding and this mask hides nothing."
    elif not padding:
        where = (f"Line {item} of your text is its longest, M = {counted(cfg.M, 'token')}, so none of its keys is "
                 "padding and this mask hides nothing; pick a shorter line to see padding.")
    else:
        where = (f"Line {item} of your text is {counted(cfg.M - padding, 'token')}, padded to M = {cfg.M} with "
                 f"{PAD_TOKEN}: its {key_span(cfg.M - padding, cfg.M - 1)} {'is' if padding == 1 else 'are'} blocked.")
    return what + " " + where


def sharing_section(t) -> None:
    """Which query heads read which K/V head: a row of heads and a table of groups (every family, shape-only too);
    with latent attention, where every head's K and V came from instead."""
    if t.config.attention == "mla":
        st.header("K and V from the latent")
        st.caption(latent_note(t.config, t.shapes) + " No K/V head is shared, so there are no groups to draw.")
        return
    s = kv_sharing(t)
    st.header("K/V heads")
    k = shape_text(s.k_shape)
    if s.name == "MHA":
        st.caption(f"Multi-head attention (MHA): nhead_kv = nhead = {s.nhead}, so each query head reads a K/V head "
                   f"of its own. K and V are {k}, (N, nhead_kv, M, d_k), as many heads as Q's "
                   f"{shape_text(s.q_shape)}. With nhead_kv < nhead (GQA, or MQA at 1) heads would share them.")
        return
    kind = ("Multi-query attention (MQA): one K/V head for all" if s.name == "MQA"
            else "Grouped-query attention (GQA)")
    where = ("read off this pass" if s.recorded else "worked out from the config, as this pass computed no values")
    st.caption(f"{kind}: nhead = {s.nhead} query heads, nhead_kv = {counted(s.nhead_kv, 'K/V head')}, so query "
               f"head h reads K/V head h // (nhead / nhead_kv) = h // {s.group} ({where}). K and V are {k}, "
               f"(N, nhead_kv, M, d_k): Q is {shape_text(s.q_shape)}. Before QKᵀ each K/V head is repeated "
               f"{s.group} times to meet its query heads, so the weights stay (N, nhead, L, S) and each query head "
               "still has its own map; what shrinks is W^K and W^V, and the KV cache, by nhead / nhead_kv.")
    show_chart(kv_heads_spec(s), width="content")
    if s.nhead > MAX_HEADS_DRAWN:
        st.caption(f"Drawn: the first {MAX_HEADS_DRAWN} of the {s.nhead} query heads, each labelled with its K/V head.")
    st.table(kv_groups_frame(s))
    if s.nhead_kv > MAX_GROUP_ROWS:
        st.caption(f"Listed: the first {MAX_GROUP_ROWS} of the {s.nhead_kv} K/V heads; the rest follow the same rule.")


@st.cache_data(max_entries=128, show_spinner=False)
def _map(cfg, kind: str, layer: int, head: int, item: int):
    return attention_map(cached_trace(cfg), kind, layer, head, item)


# Few, large entries; a slim pass holds real memory, so it waits at the gate the whole traces share.
@st.cache_data(max_entries=8, show_spinner=False)
def _slim_maps(cfg, kind: str, layer: int, item: int):
    with GATE.reserve(slim_bytes(cfg)):
        return slim_attention_maps(cfg, kind, layer, item)


def one_map(t, kind: str, layer: int, head: int, item: int):
    """One head's map from where the page's main map came from: the text's pass, a slim pass or the trace."""
    if t is not None:
        return token_map(t, kind, layer, head, item).map
    if slim:
        return _slim_maps(cfg, kind, layer, item)[head]
    return _map(cfg, kind, layer, head, item)


run = this_run()  # sliders, link, the learner's text and the trained model, worked out by the sidebar
cfg = run.cfg
kinds = attention_kinds(cfg)
intro = st.empty()  # what the map means depends on the text and the model, chosen in the box below it
your_text = text_box(cfg, run.text, run.text_problem)
trained = run.trained
if trained is not None:
    intro.caption("Each cell is how much one query token takes from one key token, for one head of a sequence of "
                  "the trained model's task: softmax(QKᵀ/√d_k), so every row sums to 1. These weights were trained "
                  "in the Training lab, so the pattern means something: each row shows where that token looks.")
elif your_text is not None:
    # The tokens are real, the weights are not: a newcomer reads meaning into which word looks at which.
    intro.caption("Each cell is how much one query token takes from one key token, for one head of one line of "
                  "your text: softmax(QKᵀ/√d_k), so every row sums to 1. The tokens are yours, but the model is "
                  "untrained (random weights), so the pattern itself means nothing yet: what to read here is the "
                  "map's shape, the mask and the row sums. The Training lab shows where a trained model looks.")
else:
    # A newcomer looks for meaning in the pattern (which word attends to which); here there is none to find.
    intro.caption("Each cell is how much one query position takes from one key position, for one head of one "
                  "sequence: softmax(QKᵀ/√d_k), so every row sums to 1. This model is untrained (random weights, "
                  "random token ids), so the pattern itself means nothing yet: what to read here is the map's "
                  "shape, the mask and the row sums. The Training lab shows where a trained model looks.")

shapes = cached_shapes(cfg)
slim = over_budget(shapes) and not slim_estimate(cfg).over(shapes.budget_bytes)  # maps from a slim pass (core.slim)
if slim:
    st.info(
        f"**A slim pass.** A whole pass of this model would need about {human_bytes(shapes.estimate.total)}, over "
        f"the {human_bytes(shapes.budget_bytes)} budget. This map comes from the batch item shown alone, run through "
        + ("only the layers it needs (for a decoder map, the whole encoder first)" if cfg.arch == "encoder-decoder"
           else "only the layers up to the one shown") + ", one layer at a time, with the whole "
        f"model's own weights: about {human_bytes(slim_bytes(cfg))} at once. Its numbers are a whole pass's.",
        icon=":material/straighten:",
    )
else:
    shape_only_banner(shapes)
if over_budget(shapes) and not slim:
    # The kind on show, or the one a link chose (kind=cross): the message named encoder self-attention
    # whatever the kind, and a link to the cross-attention of a large model got the encoder's shape.
    kind = st.session_state.get("a_kind")
    kind = kind if kind in kinds else next(iter(kinds))
    weights = shapes.row(weights_row(kind, cfg))  # recorded by the shape-only pass too: (N, nhead, L_q, S)
    st.info(
        f"**No values to draw.** This config is traced shape-only, so no attention weights were computed. "
        f"Each {kind} layer's weights would be {shape_text(weights.shape)} = {weights.numel:,} numbers "
        f"({human_bytes(weights.bytes)}). {slim_refusal(cfg, shapes.budget_bytes)}",
        icon=":material/info:",
    )
    with guard("The K/V heads"):
        sharing_section(shapes)
    st.stop()

# The sidebar has already put these four choices in range for this config and in the URL (kind=, layer=,
# head=, item=: ui.link.choices), read them from a link, and will say so if one had to fall back.
c1, c2, c3, c4 = st.columns([2, 1, 1, 1])
view = {"persist_state": "session", "on_change": forget_link_warnings}
if len(kinds) > 1:
    kind = c1.radio("kind", list(kinds), key="a_kind", **view)
else:  # a single stack has one attention: nothing to choose
    kind = next(iter(kinds))
    c1.markdown(f"**{kind.capitalize()}**, the one attention of a{'n' if cfg.arch[0] == 'e' else ''} {cfg.arch} "
                "model" + (": no encoder, so no cross-attention." if cfg.arch == "decoder-only" else
                           ": no decoder, so no mask but padding."))
layer = c2.selectbox("layer", range(cfg.layers), key="a_layer", **view)
group = cfg.nhead // cfg.nhead_kv
shared = "" if group == 1 else f"; query head h reads K/V head h // {group}"
widths = (f"each query and key nope_head_dim + rope_head_dim = {cfg.qk_head_dim} wide, each value "
          f"v_head_dim = {cfg.v_head_dim}, made back from the shared latent" if cfg.attention == "mla"
          else f"each d_k = {cfg.d_k} wide")
head = c3.selectbox("head", range(cfg.nhead), key="a_head", help=f"nhead = {cfg.nhead}, {widths}{shared}", **view)
item = c4.selectbox("batch item", range(cfg.N), key="a_item", help=f"N = {counted(cfg.N, 'sequence')}", **view)

t = queries = keys = None  # the map's pass and its axes' tokens, read again by the windowed and full pair
with guard("The attention heatmap"):
    # Over a text (or the trained model), the map is that pass's, its axes the tokens; else the seeded batch's.
    # A slim pass reads the seeded ids only, so over the budget the map keeps its positions.
    t = None if slim else text_pass(cfg, your_text)
    if t is not None and t.shape_only:
        st.info("This config is traced shape-only (over the memory budget): no weights to draw over your text.",
                icon=":material/info:")
        st.stop()
    queries = keys = padding = None
    if t is not None:
        labelled = token_map(t, kind, layer, head, item)
        a, queries, keys, padding = labelled.map, labelled.queries, labelled.keys, labelled.padding
    elif slim:
        if your_text is not None:
            st.caption("A slim pass reads the seeded random ids, not your text: this map's axes are positions.")
        with st.spinner(f"Slim pass: batch item {item} through {kind} layer {layer}…"):
            a = _slim_maps(cfg, kind, layer, item)[head]
    else:
        a = _map(cfg, kind, layer, head, item)
    if cfg.attention == "mla":  # its K and V are not per-head weights of their own: say where they came from
        st.caption(head_note(cfg, shapes.shapes, head))
    if a.capped:
        st.caption(f"Showing the first {len(a.weights)} of {counted(a.queries, 'query', 'queries')} and "
                   f"{len(a.weights[0])} of {counted(a.keys, 'key')} (capped at {MAX_POSITIONS} so large M stays "
                   "fast); the full rows still sum to 1.")
    weights, mask = attention_spec(a, queries, keys), mask_spec(a, theme(), queries, keys)
    # Side by side while the window has room for both, one below the other when it has not: the
    # browser decides, as only it knows the width (see charts.full_width).
    scrolls = ("On a screen narrower than a map, the map scrolls sideways inside its box: its last keys and its "
               "colour scale are on the right.")
    box = map_box("maps", scrolls, weights, mask)  # said only where the maps scroll (docs/layout.md)
    row = box.container(horizontal=True, wrap=True, gap="small")
    left = row.container(width=max(full_width(weights), WEIGHTS_BOX))
    right = row.container(width=max(full_width(mask), MASK_BOX))
    with left:
        st.header("Weights")  # h2 under the page's h1: a screen reader's outline skips no level
        if t is not None:
            st.caption(f"{'The trained model' if trained is not None else 'Your text'}, sequence {item}; weights: "
                       f"{weights_words(t)}. Each row is a query token, each column a key token.")
        if trained is not None:
            st.caption("On the reversal task the mirror half looks back at the token it copies: in layer 0's "
                       "maps its rows (the lower half) peak on the anti-diagonal.")
        show_chart(drawn_at_this_link(weights), width="content")
        blocked = a.blocked_weight_max
        if blocked is None and a.hidden_beyond:
            st.caption(f"Nothing is masked among the {len(a.weights[0])} keys drawn. This sequence's "
                       f"{counted(a.hidden_beyond, 'padding key')} {'comes' if a.hidden_beyond == 1 else 'come'} "
                       f"after them, at {key_span(a.keys - a.hidden_beyond, a.keys - 1)}, hidden from every query "
                       "all the same.")
        elif blocked is None:
            st.caption("Nothing is masked here: every query sees every key.")
        else:
            st.caption(f"× marks a blocked cell. The largest weight on a blocked cell is {blocked:.2g}: the mask "
                       "set its score to −∞ before the softmax, and e^−∞ = 0.")
        if queries is not None:
            show_numbers(numbers_frame(a.weights, queries, keys))
        else:
            show_numbers(numbers_frame(a.weights, [f"query {i}" for i in range(len(a.weights))],
                                       [f"key {j}" for j in range(len(a.weights[0]) if a.weights else 0)]))
    with right:
        st.header("Mask")
        show_chart(mask, width="content")
        st.caption(mask_note(kind, cfg, item, padding, layer))

pair = layer_pair(cfg, layer)
if pair is not None:
    with guard("The windowed and the full layer"):
        st.header("A windowed and a full layer")
        st.caption(pair_caption(cfg, *pair, head, item))
        maps = [one_map(t, kind, i, head, item) for i in pair]
        specs = [attention_spec(m, queries, keys) for m in maps]
        side = st.container(horizontal=True, wrap=True, gap="small")
        for i, spec in zip(pair, specs):
            with side.container(width=max(full_width(spec), WEIGHTS_BOX)):
                st.subheader(f"Layer {i}, {'windowed' if cfg.windowed(i) else 'full'}")
                show_chart(drawn_at_this_link(spec), width="content")

with guard("The K/V heads"):
    # The live pass's own record of kv_head: the text's (or trained model's) when the map is drawn from it.
    sharing_section(shapes if slim else t if t is not None else cached_trace(cfg))
