"""The numbers of a pass on a page: "Show the values" and the step-through on the Explorer, and the pass over the
learner's text (or the trained model's) whose maps the Attention page draws, labelled with their tokens.

Data flows one way: the config (sized by the text) and the text -> ``core.trace(cfg, text=...)``, cached here
per session-independent key -> core's value slices (plain lists) -> render.values' heat tables and charts.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import streamlit as st

from core import Trace, TransformerConfig, estimate, trace
from core.steps import plain_step, step_through
from core.steps import steps as steps_of
from core.tensor_lists import MAX_VALUES
from core.tokens import PAD_TOKEN, TokenizedText
from core.values import SLICE, axes, sequence_labels, value_slice
from core.views import AttentionMap, attention_kinds, attention_map
from render.markdown import as_literal
from render.steps import step_panels, step_title
from render.values import heat_table, shown_labels, values_frame
from ui.compute.trace_cache import GATE, kept_bytes, trace_cache
from ui.compute.traces import cached_shapes, cached_trace
from ui.sections.your_text import YourText, trained_model
from ui.server.guard import guard

UNTRAINED = "untrained (random weights)"


TEXT_CACHE = trace_cache(32 * 2**20)  # passes over learners' texts, weighed by the tensors they keep
_TEXT_LOCK = threading.Lock()  # the cache is shared by every session, and cachetools' caches are not thread-safe


def text_trace(cfg: TransformerConfig, tokens: TokenizedText) -> Trace:
    """The pass over a learner's text, shared by every session that typed the same text (read-only, as
    ``ui.compute.traces.cached_trace``): admitted by the gate every real pass shares, kept in a bounded cache."""
    with _TEXT_LOCK:
        hit = TEXT_CACHE.get((cfg, tokens))
    if hit is not None:
        return hit
    with GATE.reserve(estimate(cfg).total):
        t = trace(cfg, text=tokens, budget_bytes=GATE.max_bytes)
    if kept_bytes(t) <= TEXT_CACHE.maxsize:
        with _TEXT_LOCK:
            TEXT_CACHE[(cfg, tokens)] = t
    return t


def trained_pass(trained, head: int = 0) -> tuple[Trace, tuple]:
    """The trained model's pass over its task's sequence and its steps for ``head``, kept in this session's state
    (never in a shared cache: the model is this session's)."""
    kept = st.session_state.get("yt_trained_pass")
    if kept is None or kept[0] is not trained:
        kept = (trained, trained.trace(), {})
        st.session_state["yt_trained_pass"] = kept
    _, t, by_head = kept
    if head not in by_head:
        by_head[head] = steps_of(t, trained.model, head)
    return t, by_head[head]


def pass_for(cfg: TransformerConfig, mine: YourText | None) -> Trace:
    """The pass whose values the page shows: the lab's trained model's, over the learner's text, or over the
    seeded random ids."""
    trained = trained_model()
    if trained is not None:
        return trained_pass(trained)[0]
    return cached_trace(cfg) if mine is None else text_trace(cfg, mine.tokens)


def weights_words(t: Trace) -> str:
    """What the weights are, for every place values are shown."""
    return UNTRAINED if t.weights.startswith("untrained") else t.weights


def text_pass(cfg: TransformerConfig, mine: YourText | None) -> Trace | None:
    """The pass the Attention page draws when the learner typed a text or switched to the trained model; None
    for the seeded random batch, which the page draws from its own caches."""
    if mine is None and trained_model() is None:
        return None
    return pass_for(cfg, mine)


@dataclass(frozen=True)
class TokenMap:
    """One head's map over a text's (or the trained model's) pass, with the tokens that label its axes."""

    map: AttentionMap
    queries: list[str]  # one distinct, escaped label per drawn query: "3 cat"
    keys: list[str]
    padding: int  # keys of this sequence that are padding (a line shorter than M), drawn or not


def token_map(t: Trace, kind: str, layer: int, head: int, item: int) -> TokenMap:
    """The map of ``kind``, ``layer``, ``head`` and sequence ``item`` over the pass, labelled with its tokens:
    queries come from their own stack, cross-attention's keys from the source."""
    cfg = t.config
    a = attention_map(t, kind, layer, head, item)
    target = "M_target" if cfg.arch == "encoder-decoder" else "M"
    stack, block = attention_kinds(cfg)[kind]
    keys_from = "M" if stack == "enc" or block == "cross_attn" else target
    queries = shown_labels(sequence_labels(t, "M" if stack == "enc" else target, item))
    keys = sequence_labels(t, keys_from, item)
    padding = keys.count(PAD_TOKEN)
    keys = shown_labels(keys)
    return TokenMap(a, queries[:len(a.weights)], keys[:len(a.weights[0]) if a.weights else 0], padding)


def value_views(cfg: TransformerConfig, mine: YourText | None) -> None:
    """"Show the values" and "Step through the pass", each behind its own toggle."""
    show_values(cfg, mine)
    step_through_view(cfg, mine)


@st.cache_data(max_entries=16, show_spinner=False)
def plain_steps(cfg: TransformerConfig, tokens, item: int, head: int) -> tuple[str, list[dict]]:
    """Every step of the pass over the text (or the seeded ids) as plain values, and what its weights are."""
    with GATE.reserve(estimate(cfg).total):
        t, steps = step_through(cfg, text=tokens, head=head)
    return weights_words(t), [plain_step(t, s, item, head) for s in steps]


def step_through_view(cfg: TransformerConfig, mine: YourText | None) -> None:
    """One row at a time: the operation that makes it, its operands and the row, side by side in numbers."""
    if not st.toggle("Step through the pass", key="x_steps", persist_state="session",
                     help="Each row as the formula that makes it, with its operands beside it, in numbers: the "
                          "operands combined as the formula says give the row."):
        return
    with guard("The step-through"):
        if cached_shapes(cfg).shape_only:
            st.info("This config is traced shape-only (too large for a real pass here): no numbers to step "
                    "through. Lower the sizes to see them.")
            return
        left, right = st.columns(2)
        item = left.selectbox("sequence (batch item)", range(cfg.N), key="x_step_item") if cfg.N > 1 else 0
        head = right.selectbox("head", range(cfg.nhead), key="x_step_head") if cfg.nhead > 1 else 0
        trained = trained_model()
        if trained is not None:
            t, all_steps = trained_pass(trained, head)
            weights, steps = weights_words(t), [plain_step(t, s, item, head) for s in all_steps]
        else:
            weights, steps = plain_steps(cfg, None if mine is None else mine.tokens, item, head)
        titles = [step_title(s) for s in steps]
        at = st.select_slider("Step", range(len(steps)), format_func=lambda i: f"row {steps[i]['index']}",
                              key="x_step")
        step = steps[at]
        st.subheader(titles[at])
        st.caption(f"{step['words']}. Weights: {weights}.")
        operands, result = step_panels(step)
        row = st.container(horizontal=True, wrap=True, gap="medium")
        for p in [*operands, result]:
            box = row.container(width="content", border=True)
            box.markdown(f"**{as_literal(p.title)}**" + (" (the row)" if p is result else ""))
            box.caption(as_literal(p.caption))
            box.dataframe(p.table)


def show_values(cfg: TransformerConfig, mine: YourText | None) -> None:
    """"Show the values": every row's numbers as a heat-coloured table with the tokens as row labels."""
    if not st.toggle("Show the values", key="x_values", persist_state="session",
                     help="Every row's numbers, as in the seed note's screenshots: a small tensor whole, a large "
                          "one as a slice you pick."):
        return
    with guard("The values"):
        t = pass_for(cfg, mine)
        if t.shape_only:
            st.info("This pass is shape-only, so it has no values: lower the sizes to see them.")
            return
        st.caption(f"Weights: {weights_words(t)}. "
                   + ("Rows are your tokens." if mine is not None else
                      "Rows are positions and their seeded random ids; type a text above to see your tokens."))
        for row in t.rows:
            with st.expander(f"{row.index}. {row.name} {row.shape}", expanded=row.index <= 2):
                show_row_values(t, row.key)


def show_row_values(t: Trace, key: str) -> None:
    """One row's values: whole when small (each batch item and head in turn), else the slice the learner picks:
    a batch item, a head, and the first SLICE x SLICE."""
    row = t.row(key)
    names = axes(row.formula)
    items = range(t.config.N) if "N" in names else range(1)
    heads = range(t.config.nhead) if "nhead" in names else range(1)
    if row.numel <= MAX_VALUES:
        big = max(row.shape, default=1)
        for item in items:
            for head in heads:
                if len(items) > 1 or len(heads) > 1:
                    st.caption(", ".join(([f"sequence {item}"] if len(items) > 1 else [])
                                         + ([f"head {head}"] if len(heads) > 1 else [])))
                _table(t, key, item, head, big, f"{key}_{item}_{head}")
        return
    st.caption(f"{row.numel:,} values, more than the {MAX_VALUES:,} shown whole: pick a slice, and see its first "
               f"{SLICE} × {SLICE}.")
    left, right = st.columns(2)
    item = left.selectbox("sequence (batch item)", items, key=f"yv_item_{key}") if len(items) > 1 else 0
    head = right.selectbox("head", heads, key=f"yv_head_{key}") if len(heads) > 1 else 0
    _table(t, key, item, head, SLICE, f"{key}_slice")


def _table(t: Trace, key: str, item: int, head: int, most: int, widget_key: str) -> None:
    values, rows, columns = value_slice(t, key, item, head, rows=most, cols=most)
    st.dataframe(heat_table(values_frame(values, shown_labels(rows), shown_labels(columns))),
                 key=f"yv_{widget_key}")
