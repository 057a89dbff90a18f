"""The Explorer's mixture-of-experts parts: total against active parameters and where they sit, a real model's
counts against its published ones, and the router's live choices over the learner's text (or the seeded ids).

Data flows one way: the run's config -> core.param_parts / core.routing (plain values) -> render.experts' specs.
"""

from __future__ import annotations

import streamlit as st

from core import TransformerConfig
from core.param_parts import param_parts, published_check
from core.routing import routing_view
from core.tokens import PAD_TOKEN
from core.values import sequence_labels
from render.experts import param_parts_spec, routing_spec, short_count, tokens_per_expert_spec
from render.values import token_labels
from render.words import counted
from ui.look.charts import drawn_at_this_link, map_box, show_chart
from ui.look.theme import theme
from ui.sections.values import pass_for, weights_words
from ui.sections.your_text import YourText
from ui.server.guard import guard
from ui.sidebar.config import forget_link_warnings

DATA_SHAPE = ("How many tokens each expert gets, T_e, is the one shape in the whole model that depends on the data: "
              "every other shape follows from the config alone.")


def published_words(cfg: TransformerConfig) -> None:
    """A real model's total against its published count (exact), and its active count against the published
    figure (rounded by its announcement)."""
    check = published_check(cfg)
    if check is None:
        return
    if check.total_matches:
        st.success(f"**{check.total:,}**: {check.model}'s published {check.named}, matched to the parameter by "
                   "counting this model's own weights.", icon=":material/check_circle:")
    else:
        st.warning(f"{check.total:,} counted here against {check.model}'s published {check.published:,} "
                   f"({check.named}).")
    if check.published_active is None:
        return
    said = f"{check.model}'s announcement gives {check.published_active} active parameters"
    if check.active_agrees:
        st.success(f"**{check.active:,}** active: {said}, which is this count to its last digit.",
                   icon=":material/check_circle:")
    elif check.agrees_without_embeddings:
        st.info(f"**{check.active:,}** active, counted here; {said}. Without the token embeddings "
                f"({check.embeddings:,}, a table lookup that multiplies nothing) the count is "
                f"{check.active - check.embeddings:,}, which is that figure to its last digit.",
                icon=":material/info:")
    else:
        st.warning(f"{check.active:,} active counted here; {said}.")


def moe_parameters(cfg: TransformerConfig) -> None:
    """Total and active side by side, and the chart of where they sit (the Parameters tab, for experts)."""
    parts = param_parts(cfg)
    total, active = sum(p.total for p in parts), sum(p.active for p in parts)
    row = st.container(horizontal=True, wrap=True, gap="medium")
    row.container(width="content").metric("parameters in total", short_count(total), help=f"Exactly {total:,}.")
    row.container(width="content").metric("active for one token", short_count(active), help=f"Exactly {active:,}.")
    experts = next(p for p in parts if p.name == "experts")
    with_experts = cfg.layers - cfg.first_dense_layers
    where = "its one layer" if with_experts == 1 else f"each of the {with_experts} layers"
    st.caption(f"A token runs top_k = {cfg.top_k} of the n_experts = {counted(cfg.n_experts, 'routed expert')} in "
               f"{where} with experts, so it touches {experts.active:,} of their "
               f"{experts.total:,} parameters ({cfg.top_k}/{cfg.n_experts}); every other part, "
               + ("the shared experts and " if cfg.n_shared_experts else "")
               + f"the router included, it touches whole: {active:,} of {total:,} ({active / total:.1%}). The dark "
               "bar inside each bar is the active part.")
    published_words(cfg)
    show_chart(param_parts_spec(parts), width="stretch")


def row_labels(t, item: int) -> list[str]:
    """The heatmap's rows: the learner's tokens ("3 cat"), else each position and its seeded id ("3: id 17"), or
    "<pad>" where an encoder's batch pads a sequence (the router reads padding too)."""
    labels = sequence_labels(t, "M", item)
    if t.batch is not None:
        return token_labels(labels)
    return [f"{i}: {x}" if x == PAD_TOKEN else f"{i}: id {x}" for i, x in enumerate(labels)]


def routing_section(cfg: TransformerConfig, mine: YourText | None, shape_only: bool) -> None:
    """Routing, live: the router's weights for one sequence's tokens and its top_k choices, and tokens per expert
    against the even share; on a shape-only pass, only the even share."""
    st.header("Routing, live")
    with st.container(key="routing"), guard("The routing"):
        even = cfg.N * cfg.M * cfg.top_k / cfg.n_experts
        share = f"N·M·top_k / n_experts = {cfg.N}·{cfg.M}·{cfg.top_k} / {cfg.n_experts} = {even:g}"
        if shape_only:
            st.info(f"Shape-only pass: no token was routed, so how many tokens each expert gets is unknown here. "
                    f"Spread evenly, each would get {share}; the shapes above give each expert that share, rounded "
                    f"up. {DATA_SHAPE}", icon=":material/straighten:")
            return
        t = pass_for(cfg, mine)
        if t.shape_only:
            st.info(f"Shape-only pass: the tokens per expert are unknown; the even share is {share}. {DATA_SHAPE}",
                    icon=":material/straighten:")
            return
        item = 0
        if cfg.N > 1:
            item = st.selectbox("Sequence", range(min(cfg.N, 64)), key="x_route_item", persist_state="session",
                                on_change=forget_link_warnings, format_func=lambda i: f"sequence {i}")
        v = routing_view(t, item)
        each_expert = "the one expert" if cfg.n_experts == 1 else f"each of the {cfg.n_experts} experts"
        whose = "your text" if t.batch is not None else "seeded random ids (type a text above to route your tokens)"
        st.caption(f"The router of layer {v.layer}, the first with experts, over {whose}: each row is one token's "
                   f"softmax over the router's logits, a weight for {each_expert}, summing to "
                   f"1. The token goes to its top_k = {cfg.top_k} best, ringed and numbered (1 the best)"
                   + (", their weights renormalised to sum to 1 (norm_topk)." if cfg.norm_topk else
                      ", their weights kept as they are (norm_topk off).")
                   + f" The weights are {weights_words(t)}.")
        spec = routing_spec(v, row_labels(t, item), theme())
        with map_box("routing", "On a screen narrower than the map, the map scrolls sideways inside its box: the "
                                "last experts and the colour scale are on the right.", spec):
            show_chart(drawn_at_this_link(spec), width="content")  # drawn afresh per link: it has a colour scale
        st.markdown(f"**Tokens per expert** over all N·M = {counted(cfg.N * cfg.M, 'token')}, against the even "
                    f"share {share}. {DATA_SHAPE}")
        show_chart(tokens_per_expert_spec(v, cfg.N, theme()), width="stretch")
