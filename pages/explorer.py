"""Explorer: the tensors of one forward pass, with the learner's own sizes and the family's own rows.

Reads the shared sidebar config, asks the cached trace for shapes, and renders: the table (with
the heads stacked as PyTorch's scaled_dot_product_attention takes them, on demand, the code behind each row and
downloads), the extras, the architecture diagram drawn for the family, the parameter breakdown, memory against M,
and for a decoder-only model its KV cache. No tensor maths here.
"""

from functools import partial

import streamlit as st

from core import human_bytes
from core.memory import param_formulas
from core.rows import extras_for, rows_for
from core.views import layer_crossover, memory_curve
from render.diagram import (ACTIVATION_NAMES, MIN_WIDTH, NORM_NAMES, WIDTH, architecture_steps, architecture_svg,
                            architecture_title, heads_words, legend_lines)
from render.tables import (STACKED_COLUMN, TABLE_COLUMNS, memory_spec, params_spec, rows_frame, table_cells,
                          table_csv, table_file_name, table_json, table_markdown)
from render.words import counted
from ui.compute.traces import cached_shapes, LIVE_TABLE_BYTES, over_budget, shape_only_banner
from ui.look.charts import show_chart
from ui.look.layout import phone_only_caption, sidebar_closed_hint
from ui.look.theme import theme
from ui.sections.experts import moe_parameters, published_words, routing_section
from ui.sections.kv_cache import kv_cache_section
from ui.sections.values import value_views
from ui.sections.your_text import text_box
from ui.server.guard import guard
from ui.server.streamlit_internals import by_test_id, leave_legacy_pages_mode
from ui.sidebar.config import this_run

leave_legacy_pages_mode()  # before anything is drawn: see ui/server/streamlit_internals.py

# On a wide screen the figure may reach into Streamlit's margin, so a projector's window shows it whole.
BLEED = (f"@media (min-width: 864px) {{ .st-key-architecture {{ --bleed: clamp(0px, ({MIN_WIDTH}px - 100%) / 2, 4rem); "
         "margin-inline: calc(-1 * var(--bleed)); width: calc(100% + 2 * var(--bleed)); max-width: none; } }")
# The figure's box clips the toolbar (the fullscreen button): it goes in the figure's blank corner (docs/layout.md).
TOOLBAR_IN = f".st-key-architecture {by_test_id('stElementToolbar')} {{ top: 0 !important; }}"
FIGURE_CSS = (f"<style>.st-key-architecture {{ overflow-x: auto; }} .st-key-architecture img {{ width: 100%; "
              f"min-width: {MIN_WIDTH}px; max-width: {WIDTH}px; height: auto; }} {BLEED} {TOOLBAR_IN}</style>")
# On a phone PyTorch's long names may break anywhere, so the meaning column stays on screen (docs/layout.md).
GLOSSARY_CSS = ("<style>@media (max-width: 640px) { .st-key-glossary :is(th, td) { padding: 0.25rem 0.375rem; } "
                ".st-key-glossary td:nth-child(2) { overflow-wrap: anywhere; } } "
                "@media (max-width: 350px) { .st-key-glossary :is(th, td) { font-size: 0.875rem; "
                "padding: 0.25rem 0.1875rem; } }</style>")
# Rows three lines high, so the description a learner reads a row for wraps whole (docs/layout.md).
ROW_HEIGHT = 68  # px: three lines of the grid's text and a margin
DESCRIPTION_WIDTH = 275  # px: what the extras' table has left beside its other columns on a laptop
HEADER_HEIGHT = 38  # px


def table_height(rows: int) -> int:
    """Every row on screen at once: the page scrolls, not a box inside it."""
    return HEADER_HEIGHT + ROW_HEIGHT * rows


COLUMNS = {
    # Just wide enough for "14", leaving the live shape room on a phone.
    "#": st.column_config.NumberColumn("#", width=40, help="The tensor's place in the forward pass, input first"),
    "tensor": st.column_config.TextColumn("tensor", width=120),
    "formula": st.column_config.TextColumn("formula", width=120, help="The shape in the learner's notation"),
    "live shape": st.column_config.TextColumn("live shape", width=90, help="Read off the tensor the model produced"),
    # A short header that fits its column; the help and the toggle say the rest.
    STACKED_COLUMN: st.column_config.TextColumn(
        "SDPA layout", width=120,
        help="The heads stacked as PyTorch's scaled_dot_product_attention takes them: one (N, nhead, M, d_k) "
             "tensor. nn.MultiheadAttention's reference path holds (N·nhead, M, d_k) instead."),
    # The numbers are as wide as they need: a number's cell does not wrap.
    "elements": st.column_config.NumberColumn("elements", format="localized", help="Product of the shape"),
    "memory": st.column_config.TextColumn("memory", help="float32: 4 bytes per element; ids 8; masks 1"),
    "description": st.column_config.TextColumn(
        "description", width=DESCRIPTION_WIDTH,
        help="What the tensor is, in plain words. A long one is cut short: pick its row under the table to read "
             "it whole, with its code"),
}


def recorded_words(t, row) -> str:
    """Where a row's tensor is recorded. A per-head row (the note's view) shows one head of a tensor
    recorded with every head stacked: "Recorded as enc.0.self_attn.q, shape (2, 8, 8)" gave the
    row's shape to a tensor that is (2, 2, 8, 8)."""
    head = next(spec.head for spec in rows_for(t.config) + extras_for(t.config) if spec.key == row.key)
    if head is None:
        return f"Recorded as `{row.hook}`, shape {row.shape}."
    return (f"Head {head} of `{row.hook}`, which is recorded with every head stacked, shape "
            f"{t.shapes[row.hook]}; this row's shape is {row.shape}.")


@st.cache_data(max_entries=64, show_spinner=False)
def explorer_view(cfg, theme: str = "light") -> dict:
    """Everything this page draws for one config, as plain values, built once per config (and per
    theme, which colours the memory chart's labels).

    A rerun for a config seen before (a toggle, a tab, a returning slider) is then one cache
    lookup; a new config costs one trace plus building these few small tables and specs.
    """
    t = cached_shapes(cfg)
    points, crossover = memory_curve(cfg)
    # A learned table's rows grow with M only past max_len, which may lie at or past the chart's end
    # (max_len = max(M, M_target), and M_target may be 4096): then the line is flat and says so.
    grows_from = cfg.max_len if cfg.positional == "learned" and points[-1].M > cfg.max_len else None
    return {
        "trace": t,
        "table": table_cells(rows_frame(t)),
        "stacked": table_cells(rows_frame(t, stacked=True)),
        "extras": table_cells(rows_frame(t, extras=True)),
        "diagram": architecture_svg(cfg, t.shapes),
        "diagram_steps": architecture_steps(cfg, t.shapes),
        "params": params_spec(t),
        "memory": memory_spec(points, cfg.M, crossover, theme, grows_from, one_stack=cfg.M_target is None),
        "crossover": crossover,
        "params_grow_from": grows_from,
    }


def short_count(n: int) -> str:
    """20,260 as it is; from ten million on, '406.5 billion' (a metric's box cuts long numbers off)."""
    if n < 10**7:
        return f"{n:,}"
    size, word = next((s, w) for s, w in ((10**12, "trillion"), (10**9, "billion"), (10**6, "million")) if n >= s)
    return f"{n / size:.1f} {word}"


def sizes_words(cfg) -> str:
    """The config in one line: M_target and the encoder-decoder's words only where they apply."""
    target = f"M_target={cfg.M_target}, " if cfg.M_target is not None else ""
    kv = f", nhead_kv={cfg.nhead_kv}" if cfg.nhead_kv != cfg.nhead else ""
    parts = [cfg.arch, "pre-norm" if cfg.norm_first else "post-norm", NORM_NAMES[cfg.norm],
             ACTIVATION_NAMES[cfg.activation],
             "RoPE" if cfg.positional == "rope" else f"{cfg.positional} positions"] + ([] if cfg.bias else ["no bias"])
    return (f"N={cfg.N}, M={cfg.M}, {target}E={cfg.E}, nhead={cfg.nhead}{kv} (so d_k = E/nhead = {cfg.d_k}), "
            f"d_ff={cfg.d_ff}, vocab_size={cfg.vocab_size}, layers={cfg.layers}; {', '.join(parts)}.")


def rows_words(cfg) -> str:
    """What a row is, before the table, with this family's row numbers: a newcomer otherwise reads unrelated
    tensors."""
    rows = rows_for(cfg)
    index = {r.key: r.index for r in rows}
    last = rows[-1].index
    if cfg.arch == "encoder-decoder":
        return ("Each row of the table is one tensor of that pass, in the pass's order: from the source token ids "
                f"(row 1), through the first encoder layer (rows 5 to 10), to the output probabilities (row {last}).")
    stack = "decoder" if cfg.arch == "decoder-only" else "encoder"
    return (f"Each row of the table is one tensor of that pass, in the pass's order: from the token ids (row 1), "
            f"through the first layer of its one {stack} stack (rows {index['q_one_head']} to "
            f"{index['ffn_output']}), to the output probabilities (row {last}).")


def attention_params_words(cfg) -> str:
    """What one attention block holds, as a formula: latent attention's parts are in param_formulas by weight."""
    if cfg.attention == "mla":
        return ("Each latent attention block holds its query projection, W_dkv down to the latent and the rotary key, "
                "the latent's norm, W_ukv back up to every head's K and V, and W_o")
    attention = param_formulas(cfg)["self-attention" if cfg.arch != "encoder-decoder" else "encoder self-attention"]
    grouped = "" if cfg.nhead_kv == cfg.nhead else f" ({heads_words(cfg)}: W^K and W^V are E × nhead_kv·d_k)"
    whatever = ", whatever nhead is" if cfg.nhead * cfg.d_k == cfg.E else ""
    return f"Each attention block holds {attention.removeprefix('layers·(').removesuffix(')')}{whatever}{grouped}"


run = this_run()  # sliders, link, the learner's text and the trained model, worked out by the sidebar
cfg = run.cfg
# The trained model sets every slider, so there is none to move.
read_off = ("Every shape below is read off the trained model's own forward pass." if run.trained is not None else
            "Move a slider in the sidebar: every shape below is read off the model's own forward pass.")
st.caption(f"{sizes_words(cfg)} {read_off} {rows_words(cfg)}")
sidebar_closed_hint()
your_text = text_box(cfg, run.text, run.text_problem)

with guard("Tracing this config"):
    view = explorer_view(cfg, theme())
    t = view["trace"]
    shape_only_banner(t)
    if t.shape_only and not over_budget(t):
        st.info(
            f"A real pass of this config would hold about {human_bytes(t.estimate.total)} (weights and "
            "activations), so the table reads its shapes off the same forward code run on PyTorch's meta device, "
            "which takes milliseconds instead of a real pass. "
            "The shapes are identical; the Attention page runs the real pass when you want values.",
            icon=":material/bolt:",
        )

    # Each figure as wide as its own words, in a row that wraps: equal columns cut the units off.
    row = st.container(horizontal=True, wrap=True, gap="medium")
    scores = cfg.N * cfg.nhead * cfg.M * cfg.M
    row.metric("d_k = E / nhead", cfg.d_k, width="content")
    row.metric("parameters", short_count(t.params["total"]), help=f"Exactly {t.params['total']:,}.", width="content")
    if cfg.moe:  # a token runs top_k of the experts: beside the total, what one token's pass touches
        row.metric("active for one token", short_count(t.active_params), width="content",
                   help=f"Exactly {t.active_params:,}: top_k = {cfg.top_k} of the n_experts = "
                        f"{counted(cfg.n_experts, 'routed expert')} in each layer with experts, and every other part "
                        "whole.")
    # A shape-only trace holds next to nothing: the figure is what a real pass would hold.
    row.metric("a real pass would hold" if t.shape_only else "this pass holds", human_bytes(t.estimate.total),
               width="content",
               help="Weights plus what this pass keeps: every tensor of layer 0 and the attention weights of the "
                    f"deeper layers, plus the temporaries of the pass. Over {human_bytes(LIVE_TABLE_BYTES)} the "
                    "table is read off a shape-only pass instead; the Attention page draws real weights up to "
                    f"{human_bytes(t.budget_bytes)}. A training step keeps more: every layer's "
                    "activations (drawn under *Memory against M*), and gradients besides.")
    decoder = (" A decoder layer holds N × nhead × (M_target² + M_target × M)." if cfg.arch == "encoder-decoder"
               else "")
    row.metric("attention weights per layer", short_count(scores), width="content",
               help=f"Exactly {scores:,}. In each self-attention layer: N × nhead × M × M, the number that "
                    f"grows with the square of M.{decoder}")

    stacked = st.toggle(
        "Show the heads stacked as PyTorch's scaled_dot_product_attention takes them, beside the one-head view",
        key="x_stacked", persist_state="session",
        help="The table shows one head's Q as (N, M, d_k). PyTorch's scaled_dot_product_attention takes all "
             "heads in one tensor, (N, nhead, M, d_k), and the one-head view is one slice of it; "
             "nn.MultiheadAttention's reference path folds the heads into the batch, (N·nhead, M, d_k).")
    # On a phone the formula is cut and the columns after it start off screen, and the grid draws no scrollbar
    # until touched.
    phone_only_caption("The table scrolls sideways: swipe it for the formula, elements, memory and description, "
                       "or pick a row under it to read that row whole.", key="x_table")
    frame = view["stacked" if stacked else "table"]
    order = TABLE_COLUMNS[:4] + ([STACKED_COLUMN] if stacked else []) + TABLE_COLUMNS[4:]
    st.dataframe(frame, column_config=COLUMNS, column_order=order, hide_index=True, width="stretch",
                 height=table_height(len(frame)), row_height=ROW_HEIGHT, key="x_table")

    downloads = st.container(horizontal=True)  # each button as wide as its label (columns cut "JSON" at 768 px)
    # The files are written when a button is clicked, not on every run.
    downloads.download_button("Download CSV", partial(table_csv, t), file_name=table_file_name(cfg, "csv"),
                              mime="text/csv", key="x_csv", icon=":material/download:")
    downloads.download_button("Download JSON", partial(table_json, t), file_name=table_file_name(cfg, "json"),
                              mime="application/json", key="x_json", icon=":material/download:")
    # For a handout or a slide: a Markdown table pastes into most editors, and its first line names the sizes.
    copy = st.expander("Copy the table as Markdown, for a handout or slides", key="x_copy", on_change="rerun")
    if copy.open:  # drawn once opened: a code box is costly to draw in the browser on every run
        with copy:
            st.caption("The copy button is at the box's top right. The first line names the sizes, since the "
                       "sidebar will not be beside the table once it is pasted.")
            st.container(key="code_markdown").code(table_markdown(t), language="markdown")  # keyed: ui/look/css.py

    # A table cuts a long description short (tables.cell_text), and on a narrow screen its column starts off
    # to the side: every row can be read whole here, the extras' too, after the rows, numbered as in their table.
    names = {f"{r.index}. {r.name}": r for r in t.rows}
    names.update({f"extra {i}. {r.name}": r for i, r in enumerate(t.extras, 1)})
    choice = st.selectbox("Read a row whole, with the code that produces it…", list(names), index=4,
                          key="x_code_row", persist_state="session")
    row = names[choice]
    # The table's cells show no tooltip: here the description is whole.
    st.markdown(f"**{row.name}**, {row.formula}: {row.description}")
    st.caption(recorded_words(t, row))
    nothing = ("# (a weight or a mask: no line of the forward pass computes it)" if choice.startswith("extra ")
               else "# (this tensor is an input; no model code produces it)")
    code = st.expander("The code that produces it", key="x_code", on_change="rerun")
    if code.open:  # drawn once opened: the code box's highlighter is most of the browser's work on a page load
        with code:
            st.container(key="code_row").code(row.code or nothing, language="python")  # keyed: ui/look/css.py

    # Wide enough for its longest name in three lines.
    extras_columns = {
        **COLUMNS,
        "tensor": {**COLUMNS["tensor"], "width": 130},
        "formula": {**COLUMNS["formula"], "width": 110},
        "description": {**COLUMNS["description"],
                        "help": "What the tensor is, in plain words. A long one is cut short: pick 'extra n' in the "
                                "box above to read it whole"},
    }
    more = st.expander(f"More tensors ({len(t.extras)} extras: stacked heads, W^Q/W^K/W^V, masks, logits…)",
                       key="x_more", on_change="rerun")
    if more.open:  # drawn once opened: a second grid is costly to draw in the browser on every run
        with more:
            st.dataframe(view["extras"], column_config=extras_columns, hide_index=True, width="stretch",
                         height=table_height(len(view["extras"])), row_height=ROW_HEIGHT, key="x_extras")

    glossary = st.expander("Glossary: the learner's notation and PyTorch's names", key="glossary", on_change="rerun")
    if glossary.open:  # drawn once opened: a Markdown table is costly to draw in the browser on every run
        glossary.html(GLOSSARY_CSS)  # a style alone: Streamlit adds it to the page without drawing anything
        glossary.markdown(
            "| here | PyTorch `nn.Transformer` | meaning |\n|---|---|---|\n"
            "| N | batch size: the first axis with batch_first=True, the second by default | "
            "sequences processed together |\n"
            "| M, M_target | S, T (source, target length) | tokens per sequence |\n"
            "| E | d_model | width of every token vector |\n"
            "| nhead | nhead | attention heads; each gets d_k = E / nhead |\n"
            "| d_ff | dim_feedforward | hidden width of the feed-forward network |\n"
            "| layers | num_encoder_layers, num_decoder_layers | stacked layers on each side |\n"
            "| nhead_kv | num_key_value_heads (Hugging Face's Llama) | K/V heads; nhead_kv < nhead shares each "
            "among a group of query heads (GQA; MQA at 1) |\n"
            "| vocab_size | (the embedding's num_embeddings) | distinct token ids |\n"
            "| (none here) | dropout, 0.1 by default | in training, the paper zeroes 10% of each sub-layer's "
            "output, and of the token + position sums, at random; this model has no dropout: it changes no "
            "shape, and a trained model runs without it |"
        )

value_views(cfg, your_text)  # "Show the values" and the step-through, over your text

st.header("Pictures")
# Only the open tab is drawn (each tab a rerun): two charts redrawn on every key press cost the browser most of a run.
diagram_tab, params_tab, memory_tab = st.tabs(["Architecture", "Parameters", "Memory against M"], key="x_tabs",
                                              on_change="rerun")
if diagram_tab.open:
    with diagram_tab, guard("The architecture diagram"):
        drawn = ("One encoder and one decoder layer drawn; each stack repeats it `layers` times with the same shapes."
                 if cfg.arch == "encoder-decoder" else
                 f"One layer of the single {'decoder' if cfg.arch == 'decoder-only' else 'encoder'} stack drawn (no "
                 f"{'encoder, no cross-attention' if cfg.arch == 'decoder-only' else 'decoder'}); the stack repeats it "
                 "`layers` times with the same shapes.")
        scrolls = ("On a narrow screen the figure keeps its size and scrolls sideways: the decoder is on the right. "
                   if cfg.arch == "encoder-decoder" else "On a narrow screen the figure keeps its size and scrolls "
                   "sideways. ")
        st.caption(f"{drawn} The lines at the top name the parts it is drawn with. Dashed arrows are residual paths. "
                   f"Every label is a live shape from the trace. {scrolls}To show it larger, to a class say, press the "
                   "fullscreen button in its top right corner (it shows while the pointer is over the figure, or once "
                   "the figure is tapped).")
        # An SVG through st.image (a data URI, no HTML); narrower than MIN_WIDTH it scrolls rather than shrinks.
        st.html(FIGURE_CSS)
        with st.container(key="architecture"):
            st.image(view["diagram"], alt=architecture_title(cfg))
        words = st.expander("The figure in words: every arrow and its shape", key="x_words", on_change="rerun")
        if words.open:  # drawn once opened, as the glossary
            words.markdown("\n".join(f"1. {step}".replace("_", "\\_") for step in view["diagram_steps"]))
            words.caption("Drawn with these parts, as the lines at the figure's top say: "
                       + "; ".join(legend_lines(cfg)).replace("_", "\\_") + ".")
if params_tab.open:
    with params_tab, guard("The parameter breakdown"):
        # Tied, the output layer's own parameters are its vocab_size biases: its matrix is the embedding's.
        vocab_words = ("the one embedding matrix, shared with the output layer, grows with vocab_size × E (the output "
                       "layer adds only its vocab_size biases)" if cfg.tie_embeddings
                       else "the embeddings and output layer grow with vocab_size × E")
        st.caption(f"{t.params['total']:,} parameters in total. {attention_params_words(cfg)}; {vocab_words}.")
        if cfg.moe:  # total against active, and where they sit by part
            moe_parameters(cfg)
        else:
            published_words(cfg)
            show_chart(view["params"], width="stretch")
if memory_tab.open:
    with memory_tab, guard("The memory chart"):
        crossover = view["crossover"]
        show_chart(view["memory"], width="stretch")
        st.caption("Bytes of one forward pass that keeps every layer's activations (the tensors this model records), "
                   "as training must keep activations for the backward pass. PyTorch's autograd keeps a set like it "
                   "but not the same: of each attention's two maps it keeps only the weights, since the softmax's "
                   "gradient needs only its output, so its attention term is about half of this one.")
        if crossover is not None and cfg.arch != "encoder-decoder":
            st.caption("Doubling M doubles the linear terms and quadruples the attention term, so from some M on "
                       f"the attention maps outweigh the other activations. In one layer, the attention scores and "
                       f"weights (N × nhead × M² each) outweigh that layer's other activations once "
                       f"M > (9E + {'3·d_ff' if cfg.activation == 'swiglu' else 'd_ff'}) / (2 nhead), from "
                       f"M = {layer_crossover(cfg)} here, whatever N and the number of layers. With the embeddings, "
                       f"logits and probabilities counted too, attention outweighs all the other activations from "
                       f"M = {crossover} (the weights are not counted in that).")
        elif crossover is not None:
            # The lesson first, in words; the exact crossing points after it, for whoever wants them.
            st.caption("Doubling M doubles the linear terms and quadruples the attention term, so from some M on "
                       "the attention maps outweigh the other activations. Along the chart, where M_target = M"
                       + ("" if cfg.M_target == cfg.M else f" (yours is {cfg.M_target}, not {cfg.M})")
                       + f": over an encoder layer and a decoder layer together, the attention scores and weights "
                       f"(N × nhead × M² per attention, each) outweigh those layers' other activations once "
                       f"M > (12E + d_ff) / (3 nhead), from M = {layer_crossover(cfg)} here: about 5.3 d_k when "
                       f"d_ff = 4E, whatever N and the number of layers. (An encoder layer alone, with one attention, "
                       f"crosses later; a decoder layer, with two, sooner.) "
                       f"With the embeddings, logits and probabilities counted too, attention outweighs all the other "
                       f"activations from M = {crossover} (the weights are not counted in that).")
        else:
            st.caption("Within the lengths drawn, the attention term stays below the linear terms.")
        if view["params_grow_from"] is not None:
            st.caption(f"With learned positions the parameter line rises past M = max_len = {cfg.max_len}: a model "
                       f"that runs at M needs a position table of at least M rows, E weights each.")


if cfg.moe:
    routing_section(cfg, your_text, t.shape_only)
if cfg.arch == "decoder-only":
    kv_cache_section(cfg)
