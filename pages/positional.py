"""Positional encoding: the M x E table as a heatmap, a few dimensions as curves, and the
sinusoidal and learned kinds side by side; for a RoPE model, its rotation angles and the relative
property measured live; for a T5 model, the bucket of every (query, key) pair.

core.views builds capped tables (at most MAX_POSITIONS positions and MAX_DIMS dimensions drawn),
so no slider position makes this page allocate more than a few megabytes.
"""

import streamlit as st

from core import estimate, human_bytes
from core.views import (MAX_CURVE_POSITIONS, MAX_DIMS, MAX_POSITIONS, MAX_ROPE_POSITION, most_alike_pair, pair_step,
                        positional_view, rope_relative, rope_view, sinusoid_curves)
from render.charts import (COLUMN_MAX, curves_spec, full_width, positional_spec,
                          scrolls_on_the_narrowest_phone, similarity_spec, zero_vectors_caption)
from render.rope import rope_angles_frame, rope_angles_spec, rope_scores_frame
from render.tables import numbers_frame
from render.words import counted
from ui.compute.traces import cached_shapes, cached_trace, config_over_budget
from ui.link.choices import MAX_CURVES, curve_dims, positional_tabs
from ui.look.charts import drawn_at_this_link, map_box, show_chart, show_numbers
from ui.look.layout import narrowest_only_caption
from ui.sections.relative import relative_tab, relative_words
from ui.sections.values import trained_pass
from ui.server.guard import guard
from ui.server.streamlit_internals import leave_legacy_pages_mode
from ui.sidebar.config import forget_link_warnings, this_run

leave_legacy_pages_mode()  # before anything is drawn: see ui/server/streamlit_internals.py

KINDS = ("sinusoidal", "learned")


@st.cache_data(max_entries=64, show_spinner=False)
def _view(cfg, kind: str):
    # The traced model's own learned table is used when it exists; otherwise core seeds one.
    t = None
    if kind == "learned" and cfg.positional == "learned" and not config_over_budget(cfg):
        t = cached_trace(cfg)
    return positional_view(cfg, kind, t)


@st.cache_data(max_entries=64, show_spinner=False)
def _rope_view(cfg):
    return rope_view(cfg)


@st.cache_data(max_entries=64, show_spinner=False)
def _curves(E: int, dims: tuple[int, ...], positions: int):
    return sinusoid_curves(E, list(dims), positions)


def sinusoid_words(E: int) -> str:
    """How the table's dimensions vary, as far as it holds at this E. The slow right-hand pair exists
    from E = 4 (its angle turns 10000^(-2/4) = 0.01 radians a position); at E = 2 the one cosine
    turns a radian a position (1, 0.54, -0.42, -0.99), and E = 1 has no cosine at all."""
    if E == 1:
        return " Its one dimension holds sin(p): E = 1 leaves no room for a cosine."
    words = " Dimension 2i holds sin(p / 10000^(2i/E)) and dimension 2i + 1 its cosine"
    if E < 4:
        return words + "."
    return (words + ": the left dimensions change fast from row to row, the right ones so slowly that over a "
            "few positions they stay near 0 (sine) and 1 (cosine).")


def curves_words(E: int) -> str:
    """The curves tab's formula and what it makes of the dimensions, as far as it holds at this E:
    "low dimensions turn fast, high ones slowly" needs two frequencies at least (E >= 3)."""
    formula = "Sinusoidal encoding: PE[p, 2i] = sin(p / 10000^(2i/E)), PE[p, 2i+1] = cos(same angle)."
    if E == 1:
        return formula + " At E = 1 only PE[p, 0] = sin(p) is left: no cosine, and no slower frequency."
    if E == 2:
        return (formula + " At E = 2 that is one frequency, sin(p) and cos(p), both turning a radian a position: "
                "nothing turns slowly.")
    return formula + (" Low dimensions turn fast, high ones slowly, so together they give each position a unique "
                      "pattern.")


def sinusoid_likeness_words(E: int) -> str:
    """What the sinusoidal similarity map shows. At E = 1 a position is one number, sin(p), and two
    one-number vectors score +1 or -1 by their signs alone (neighbours 3 and 4 score -1, positions
    1 and 7 score +1), so "sinusoids make nearby positions alike" does not hold there."""
    if E == 1:
        return ("At E = 1 a sinusoidal position is one number, sin(p), so any two positions other than 0 (whose "
                "sin 0 = 0 has no direction) score +1 (their sines share a sign) or -1: nearness does not show; ")
    return ("Sinusoids make nearby positions alike, and the likeness tends to fall with distance (not steadily: "
            "at small E some far positions come back close); ")


def learned_likeness_words(v, E: int, trained: bool = False) -> str:
    """What a learned table's similarity map shows, read off the map (``v``): random vectors
    are alike only by chance, which in few dimensions is often (at E = 2 two positions can score
    1.00), so "only each position with itself is alike" is false there."""
    most = most_alike_pair(v)
    if trained:
        return ("the trained model's learned table was shaped by its task in the Training lab"
                + ("." if most is None else f": here the most alike two different positions score {most:.2f}."))
    if most is None:  # one position: no pair to compare
        return "an untrained learned table is random, so its positions are alike only by chance."
    return (f"an untrained learned table is random, so its positions are alike only by chance, which in few "
            f"dimensions is often and in many rare: here, at E = {E}, the most alike two different positions "
            f"score {most:.2f}.")


def rope_tab(cfg) -> None:
    """RoPE's angles per pair of dimensions, that it has no parameters, and the relative property measured."""
    params = cached_shapes(cfg).params
    v = _rope_view(cfg)
    # At d_k = 2 pair 0 is the last pair too: one speed, no slow columns.
    speeds = ("Its one pair, pair 0, turns 1 radian a position." if v.d_k == 2 else
              f"Pair 0 turns 1 radian a position and the last pair (pair {v.d_k // 2 - 1}) {v.slowest:.3g} radians: "
              "the left columns change fast, the right ones slowly.")
    st.caption(f"RoPE has no parameters: this model's positional parameters number {params['positional table']:,} "
               f"of its {params['total']:,}, counted on the model itself. Position p turns pair i of every query "
               "and key (dimensions i and i + d_k/2, as Hugging Face's Llama pairs them) by "
               "θ = p · 10000^(−2i/d_k), the same in every layer and head; V is not turned. " + speeds)
    if v.positions < cfg.M or len(v.pairs) < cfg.d_k // 2:
        st.caption(f"Drawn: the first {v.positions} of M = {counted(cfg.M, 'position')} and {len(v.pairs)} of the "
                   f"{counted(cfg.d_k // 2, 'pair')} (capped so large sizes stay fast).")
    spec = rope_angles_spec(v)
    with map_box("rope", "On a screen narrower than the map, the map scrolls sideways inside its box.", spec):
        show_chart(drawn_at_this_link(spec), width="content")
    show_numbers(rope_angles_frame(v), "The angles, in radians")

    st.header("The score depends on the offset only")
    st.caption("Take one query q and one key k. Turn q to position i and k to position j and score them: q·k after "
               "RoPE. Shift both by s, to i + s and j + s, and score again. The two turns differ by the angle of "
               "i − j alone, so the scores agree, up to float32 rounding (which grows with the positions).")
    c1, c2, c3 = st.columns(3)
    keep = {"min_value": 0, "max_value": MAX_ROPE_POSITION, "step": 1, "persist_state": "session",
            "on_change": forget_link_warnings}
    # The range in the label: a box that refuses a value only turns red.
    upto = f"0 to {MAX_ROPE_POSITION:,}"
    i = c1.number_input(f"i — query position ({upto})", key="p_rope_i", **keep)
    j = c2.number_input(f"j — key position ({upto})", key="p_rope_j", **keep)
    shift = c3.number_input(f"s — shift ({upto})", key="p_rope_s", **keep)
    t = None if config_over_budget(cfg) else cached_trace(cfg)
    r = rope_relative(cfg, int(i), int(j), int(shift), t)
    st.caption(f"q and k: {r.source}.")
    st.table(rope_scores_frame(r))
    words = (f"Difference: {r.difference:.3g}, within the {r.allowance:.2g} that float32 rounding allows at these "
             f"positions. Without RoPE the same q and k score {r.unturned:.6g} at any positions: RoPE is what makes "
             f"the score depend on the offset i − j = {r.i - r.j}.")
    if abs(r.difference) <= r.allowance:
        st.success(f"**Same score.** {words}", icon=":material/check:")
    else:
        st.warning(f"**The scores differ by more than float32 rounding.** {words}")


def table_tab(cfg, v) -> None:
    """The model's own added table as a heatmap, with its numbers."""
    # "Computed from the formula" with the formula two tabs away left the stripes unexplained: why
    # the right-hand columns barely change is the first thing a newcomer asks of this heatmap.
    formula = "" if cfg.positional != "sinusoidal" else sinusoid_words(cfg.E)
    st.caption(f"{cfg.positional.capitalize()}: {v.note}. Row p is added to the token at position p; the "
               f"same rows serve every sequence in the batch.{formula}")
    spec = positional_spec(v)
    # On a phone the map scrolls without a visible scrollbar: say where its colour scale is.
    scrolls = ("On a screen narrower than the map, the map scrolls sideways inside its box: its last dimensions "
               "and its colour scale are on the right.")
    with map_box("table", scrolls, spec):
        show_chart(drawn_at_this_link(spec), width="content")
    show_numbers(numbers_frame(v.table, [f"position {p}" for p in range(v.positions)], [f"dim {d}" for d in v.dims]))


def kind_words(cfg) -> str:
    """What this model does with positions, in a sentence or two, for the page's first caption."""
    if cfg.positional == "rope":
        return ("This model uses **RoPE** (rotary positions): nothing is added to its token embeddings. Instead "
                "every attention layer turns each query and each key by angles that grow with its position, one "
                f"angle per pair of a head's d_k = {cfg.d_k} dimensions, and leaves the values as they are.")
    if cfg.positional == "relative":
        return relative_words(cfg)
    if cfg.positional == "none":
        order = ("Only its causal mask hints at order (position i sees i + 1 keys)." if cfg.arch == "decoder-only"
                 else "Shuffle its tokens and each one's output is shuffled the same way, unchanged.")
        return ("This model uses **no** positions: there is no position signal at all. Nothing is added to its token "
                f"embeddings and nothing turns its queries or keys, so its attention cannot tell where a token "
                f"sits. {order} The tabs show the tables it could add.")
    return (f"So each position p gets a vector of E = {counted(cfg.E, 'number')} added to its token embedding. This "
            f"model uses **{cfg.positional}** positions.")


run = this_run()  # sliders, link, the learner's text and the trained model, worked out by the sidebar
cfg = run.cfg
st.caption("Attention without a mask treats its input as a set and cannot tell positions apart (a causal mask "
           "lets a model infer some order on its own). " + kind_words(cfg))

# This page needs no pass, so it asks the estimate, not a trace, whether the other pages' is shape-only.
if config_over_budget(cfg):
    # Not the other pages' shape-only banner ("no values were computed"): this page needs no pass.
    st.info(f"A real pass of this model would need about {human_bytes(estimate(cfg).total)}, so the other "
            "pages trace it shape-only. This page needs no pass: the sinusoidal table comes from its formula, "
            "and a learned one is seeded here at this size, so every number below is computed.",
            icon=":material/straighten:")
views = {}
with guard("Building the positional tables"):
    views = {kind: _view(cfg, kind) for kind in KINDS}
    if run.trained is not None and cfg.positional == "learned":  # its own table; the model is this session's
        views["learned"] = positional_view(cfg, "learned", trained_pass(run.trained)[0])
    v = views.get(cfg.positional, views["sinusoidal"])  # RoPE and "none" add no table: the tabs show the two kinds
    notes = []
    if v.positions < cfg.M:
        notes.append(f"the first {v.positions} of M = {counted(cfg.M, 'position')}")
    if len(v.dims) < cfg.E:
        step = pair_step(cfg.E)
        notes.append(f"the sine and cosine (dimensions 2i and 2i + 1) of one frequency in {step}, "
                     f"{len(v.dims)} of E = {cfg.E} dimensions")
    if notes:
        st.caption(f"Drawn: {' and '.join(notes)} (capped at {MAX_POSITIONS} × {MAX_DIMS} cells so large sizes "
                   "stay fast).")

# The sidebar has put the tab and the curves' dimensions in the URL (tab=curves&dims=0,1,30,31:
# ui.link.choices) and read them from a link; the tabs keep their state (a key and on_change) for that.
tabs = st.tabs(positional_tabs(cfg), key="p_tab", on_change=forget_link_warnings)
tab_table, tab_curves, tab_compare = tabs[-3:]  # a RoPE model's page has its rotation first, a T5 model's buckets
if cfg.positional == "rope":
    with tabs[0], guard("RoPE's rotation"):
        if cfg.attention == "mla":  # turns only its rope_head_dim part, not d_k: these views draw d_k's pairs
            st.info(f"Multi-head latent attention turns only the rope_head_dim = {cfg.rope_head_dim} part of each "
                    "query and key, and one rotary key shared by every head; these views draw multi-head attention's "
                    "d_k pairs. Set attention to MHA / GQA in the sidebar to see them.", icon=":material/info:")
        else:
            rope_tab(cfg)
if cfg.positional == "relative":
    with tabs[0], guard("The relative buckets"):
        relative_tab(cfg)

with tab_table, guard("The table heatmap"):
    if cfg.positional in KINDS:
        table_tab(cfg, views[cfg.positional])
    else:
        st.info("This model adds no table to its token embeddings"
                + {"rope": ": RoPE turns q and k instead (its first tab). ",
                   "relative": ": T5's relative bias is added to the scores instead (its first tab). "}.get(
                    cfg.positional, ", and has no other position signal. ")
                + "The other tabs show the sinusoidal and learned tables a model like it could add.",
                icon=":material/info:")

with tab_curves, guard("The curves"):
    st.caption(curves_words(cfg.E))
    # Each E keeps its own choice (its key), first a fast, a middle and a slow pair (page_links.default_dims).
    chosen = st.multiselect("dimensions", curve_dims(cfg.E), max_selections=MAX_CURVES, key=f"p_dims_{cfg.E}",
                            persist_state="session", on_change=forget_link_warnings)
    positions = min(max(cfg.M, 100), MAX_CURVE_POSITIONS)
    if chosen:
        show_chart(curves_spec(_curves(cfg.E, tuple(chosen), positions)), width="stretch")
        st.caption(f"Positions 0 to {positions - 1}: the sinusoids are defined for any position, beyond M too. "
                   "A learned table has only max_len rows and nothing past them.")
    else:  # empty axes with a legend's title and no word on why
        most = min(MAX_CURVES, len(curve_dims(cfg.E)))  # E = 4 has 4 dimensions to pick, not 8
        st.info(f"No dimension is chosen, so there is no curve to draw: pick up to {most} in the box above.")

with tab_compare, guard("The comparison"):
    st.caption("Each kind's table, and beside it (below it, on a narrow screen) the cosine similarity between "
               "positions. " + sinusoid_likeness_words(cfg.E)
               + learned_likeness_words(views["learned"], cfg.E, trained=run.trained is not None)
               + ("" if run.trained is not None else " Training is what gives a learned table its structure."))
    maps = {kind: (positional_spec(views[kind], most=COLUMN_MAX), similarity_spec(views[kind], most=COLUMN_MAX))
            for kind in KINDS}
    # On the narrowest phones even the default E's maps scroll: a caption says so there only.
    if scrolls_on_the_narrowest_phone(*(spec for pair in maps.values() for spec in pair)):
        narrowest_only_caption("On a screen this narrow, a map wider than the screen scrolls sideways inside its "
                               "box: its colour scale is on the right.", key="compare")
    for kind in KINDS:
        v = views[kind]
        st.markdown(f"**{kind.capitalize()}**: {v.note}")
        table, similarity = maps[kind]
        row = st.container(horizontal=True, wrap=True, gap="large")  # two to a row where they fit
        with row.container(width=full_width(table)):
            show_chart(drawn_at_this_link(table), width="content")
        with row.container(width=full_width(similarity)):
            show_chart(drawn_at_this_link(similarity), width="content")
        if v.zero_positions:  # E = 1: sinusoidal position 0 is [sin 0] = [0], alike with nothing, itself too
            st.caption(zero_vectors_caption(v, cfg.E))
