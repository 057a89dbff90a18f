"""The sidebar's controls for the newer parts: the FFN (dense or a mixture of experts), the attention (MHA/GQA or
latent attention), a sliding window and T5's relative buckets and scales.

Each control shows only where its part applies, and offers only values valid with the sizes above it (top_k at
most n_experts, first_dense_layers below layers, an even rope_head_dim). What the learner wants is kept while the
family or the sizes leave a part out, and comes back with them, as nhead does; a sentence says so. The widgets
keep their values in session state under ``w_<field>`` like the sizes' (ui/sidebar/config.py owns that machinery and
passes it in as ``Kit``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import streamlit as st

from core import TransformerConfig
from ui.link.config import FFS, LENGTHS, WIDTHS, snap_config
from ui.link.parts import BUCKET_RANGE, EXPERT_COUNTS, FOLLOWERS, PART_FIELDS, SHARED_RANGE, UNSET, pinned

LAST = "sidebar_last"  # the sliders' config as the sidebar last had it: the followers follow from there
FFN_KEY, WINDOW_KEY = "w_ffn", "w_window_on"  # the two choices that are no config field: n_experts > 0, window > 0
CHOICE_KEYS = (FFN_KEY, WINDOW_KEY)
FFN_NAMES = {"dense": "dense", "experts": "mixture of experts"}
WINDOW_NAMES = {"off": "off (full attention)", "on": "a window of W positions"}
ATTENTION_NAMES = {"mha": "MHA / GQA", "mla": "MLA (latent)"}
FIRST_EXPERTS, FIRST_WINDOW = 8, 4  # what a first switch to experts or a window starts from
LABELS = {
    "ffn": "FFN — dense or a mixture of experts",
    "n_experts": "n_experts — experts per layer",
    "top_k": "top_k — experts per token",
    "n_shared_experts": "n_shared_experts — experts every token passes",
    "d_ff_expert": "d_ff_expert — each expert's hidden width",
    "first_dense_layers": "first_dense_layers — dense layers before the experts",
    "norm_topk": "norm_topk — the chosen experts' weights sum to 1",
    "attention": "attention — heads",
    "head_dim": "head_dim — d_k, each head's width",
    "qk_norm": "qk_norm — RMSNorm on each head's q and k",
    "kv_lora_rank": "kv_lora_rank — the cached latent's width",
    "q_lora_rank": "q_lora_rank — the query's latent (0: none)",
    "rope_head_dim": "rope_head_dim — the rotary part of q and k",
    "nope_head_dim": "nope_head_dim — the plain part of q and k",
    "v_head_dim": "v_head_dim — each head's value width",
    "window": "window — sliding window",
    "window_W": "W — positions a query sees, itself included",
    "global_every": "global_every — every k-th layer full",
    "relative_buckets": "relative_buckets — buckets of offsets",
    "relative_max_distance": "relative_max_distance — the farthest offset told apart",
    "scale_scores": "scale_scores — divide the scores by √d_k",
    "scale_embeddings": "scale_embeddings — multiply the embeddings by √E",
}


@dataclass(frozen=True)
class Kit:
    """The sidebar's widget machinery the controls use: set a widget from code, a field's widget arguments (its
    key, a disabled copy while a text or the trained model sets it), and the callback that marks a move."""

    set_widget: Callable[[str, Any], None]
    args: Callable[..., dict[str, Any]]
    moved: Callable[[], None]
    used: dict[str, Any]
    value: Callable[..., Any]  # a widget's value by key (and default); on a session's first run the link's until drawn


def wanted_parts(value: Callable[..., Any]) -> dict[str, Any]:
    """The parts the widgets ask for (``value``: a widget's, by key and default): experts and a window only
    when their choice is on."""
    wanted = {name: value("w_" + name, UNSET[name]) for name in PART_FIELDS}
    experts = value(FFN_KEY, "experts" if wanted["n_experts"] else "dense") == "experts"
    wanted["n_experts"] = (wanted["n_experts"] or FIRST_EXPERTS) if experts else 0
    window = value(WINDOW_KEY, "on" if wanted["window"] else "off") == "on"
    wanted["window"] = (wanted["window"] or FIRST_WINDOW) if window else 0
    if not window:
        wanted["global_every"] = 0
    return wanted


def resolve(sizes: dict[str, Any], value: Callable[..., Any]) -> tuple[dict[str, Any], TransformerConfig, list[str]]:
    """The part fields that run with the sliders' ``sizes``, the config they make, and a sentence for each part
    the family or the sizes leave out for now. A follower (head_dim, top_k, d_ff_expert, the latent widths) left
    where the config put it last run is unset again, so that it moves with E, nhead, d_ff or n_experts."""
    last = st.session_state.get(LAST)
    wanted = wanted_parts(value)
    kept = pinned(last) if isinstance(last, TransformerConfig) else set(FOLLOWERS)
    for name in FOLLOWERS:
        if name not in kept and wanted[name] == getattr(last, name):
            wanted[name] = None
    snapped, notes = snap_config(sizes | wanted)
    parts = {name: None if name in FOLLOWERS and wanted[name] is None else getattr(snapped, name)
             for name in PART_FIELDS}
    return parts, snapped, notes


def set_choices(cfg: TransformerConfig, set_widget: Callable[[str, Any], None]) -> None:
    """The two on/off choices as ``cfg`` has them (a link or a preset set every field)."""
    set_widget(FFN_KEY, "experts" if cfg.moe else "dense")
    set_widget(WINDOW_KEY, "on" if cfg.window else "off")


def part_controls(group, sizes: dict[str, Any], kit: Kit) -> tuple[dict[str, Any], list[str]]:
    """Draw the parts' controls into ``group``, the open Architecture group (None: closed, nothing drawn), and
    return the part fields that run and a sentence for each part left out. Called after the sizes' widgets."""
    state = st.session_state
    parts, cfg, notes = resolve(sizes, kit.value)
    if any(name in kit.used for name in PART_FIELDS):  # the trained model sets every part (a text sets sizes only)
        try:
            cfg = TransformerConfig(**{**sizes, **kit.used})
        except ValueError:
            pass  # its sizes and the sliders' family disagree: the sliders' own parts are shown, greyed out
    shown = _visible(cfg, sizes)
    # The parts' widgets hold what runs, drawn or not (a follower such as head_dim moves with E even while the
    # group is closed); those of parts left out keep what the learner wanted (Streamlit would forget them).
    for name in PART_FIELDS:
        key, value = "w_" + name, getattr(cfg, name)
        own = name in shown and name not in kit.used  # the part runs, and its own widget (not a copy) holds it
        if own and value is not None and kit.value(key) != value:
            kit.set_widget(key, value)
        elif key in state and not (own and group is not None):  # not drawn this run: kept
            kit.set_widget(key, state[key])
    for key in CHOICE_KEYS:
        if key in state:
            kit.set_widget(key, state[key])
    if group is not None:
        with group:
            st.markdown("**Experts, latent attention, window**")
            _ffn(cfg, sizes, kit)
            _attention(cfg, sizes, kit)
            _window(cfg, sizes, kit)
            _scales(cfg, kit)
            if cfg.positional == "relative":
                _buckets(kit)
    return parts, notes


def _on_move(kit: Kit) -> dict[str, Any]:
    """A part control's callback: the sidebar's own (a preset no more, stale values dropped)."""
    return {"on_change": kit.moved}


def _choice_args(key: str, names: dict[str, str], kit: Kit) -> dict[str, Any]:
    """An on/off choice's key, and its default on a session's first run (code sets it on every other): the link's."""
    if key in st.session_state:
        return {"key": key}
    return {"key": key, "index": list(names).index(kit.value(key, next(iter(names))))}


def _visible(cfg: TransformerConfig, sizes: dict[str, Any]) -> set[str]:
    """The part fields whose widgets are drawn for this config."""
    shown = {"scale_scores", "scale_embeddings"}
    if cfg.moe:
        shown |= {"n_experts", "top_k", "n_shared_experts", "d_ff_expert", "first_dense_layers", "norm_topk"}
    if cfg.arch != "encoder-decoder":
        shown.add("attention")
    if cfg.attention == "mla":
        shown |= {"kv_lora_rank", "q_lora_rank", "rope_head_dim", "nope_head_dim", "v_head_dim"}
    else:
        shown |= {"head_dim", "qk_norm"}
    if cfg.window:
        shown |= {"window", "global_every"}
    if cfg.positional == "relative":
        shown |= {"relative_buckets", "relative_max_distance"}
    return shown


def _ffn(cfg: TransformerConfig, sizes: dict[str, Any], kit: Kit) -> None:
    if sizes["arch"] == "encoder-decoder" and "n_experts" not in kit.used:
        st.caption("FFN: dense. Experts are built for a single stack here (decoder-only or encoder-only).")
        return
    trained = "n_experts" in kit.used
    st.radio(LABELS["ffn"], list(FFN_NAMES), format_func=FFN_NAMES.__getitem__, horizontal=True,
             **_on_move(kit), disabled=trained,
             **({"index": int(cfg.moe), "key": "shown_ffn"} if trained else _choice_args(FFN_KEY, FFN_NAMES, kit)),
             help="A mixture of experts replaces the FFN by n_experts FFNs; a router sends each token to top_k of "
                  "them, so a token uses a few experts' weights: active parameters are far fewer than the total.")
    if not cfg.moe:
        return
    moved = _on_move(kit)
    st.select_slider(LABELS["n_experts"], **moved, **kit.args("n_experts", EXPERT_COUNTS[1:]))
    top = list(range(1, cfg.n_experts + 1))
    st.select_slider(LABELS["top_k"], **moved, **_lone(kit.args("top_k", top)),
                     help="At most n_experts; moves with n_experts while it is min(2, n_experts), Mixtral's two.")
    st.slider(LABELS["n_shared_experts"], SHARED_RANGE[0], SHARED_RANGE[1], **moved, **kit.args("n_shared_experts"))
    st.select_slider(LABELS["d_ff_expert"], **moved, **kit.args("d_ff_expert", FFS),
                     help="Moves with d_ff while the two are equal; DeepSeek's and Qwen3's experts are far narrower.")
    dense = list(range(0, sizes["layers"]))
    st.select_slider(LABELS["first_dense_layers"], **moved, **_lone(kit.args("first_dense_layers", dense)),
                     help="Below layers: at least one layer keeps its experts.")
    st.checkbox(LABELS["norm_topk"], **moved, **kit.args("norm_topk"))


def _attention(cfg: TransformerConfig, sizes: dict[str, Any], kit: Kit) -> None:
    moved = _on_move(kit)
    if cfg.arch != "encoder-decoder":
        # MLA turns its keys with RoPE and gives every head its own K and V: offered only where that holds.
        allowed = sizes["positional"] == "rope" and sizes["nhead_kv"] == sizes["nhead"] or "attention" in kit.used
        st.radio(LABELS["attention"], format_func=ATTENTION_NAMES.__getitem__, horizontal=True,
                 **moved, **kit.args("attention", list(ATTENTION_NAMES) if allowed else ["mha"], arg="index"),
                 help="MLA (DeepSeek) caches one narrow latent a token instead of every head's K and V, and makes "
                      "each head's K and V back from it; a separate rotary part carries RoPE. It needs RoPE and a "
                      "K/V head per query head (nhead_kv = nhead).")
        if not allowed:
            st.caption("MLA is offered with RoPE positions and nhead_kv = nhead: it turns a rotary part of its keys, "
                       "and every head makes its own K and V back from the latent.")
    if cfg.attention == "mla":
        st.select_slider(LABELS["kv_lora_rank"], **moved, **kit.args("kv_lora_rank", WIDTHS))
        st.select_slider(LABELS["q_lora_rank"], **moved, **kit.args("q_lora_rank", [0, *WIDTHS]))
        st.select_slider(LABELS["rope_head_dim"], **moved, **kit.args("rope_head_dim", [w for w in WIDTHS if w % 2 == 0]),
                         help="Even: RoPE turns pairs of dimensions.")
        st.select_slider(LABELS["nope_head_dim"], **moved, **kit.args("nope_head_dim", WIDTHS))
        st.select_slider(LABELS["v_head_dim"], **moved, **kit.args("v_head_dim", WIDTHS))
        return
    d_k = sizes["E"] // sizes["nhead"]
    widths = [w for w in WIDTHS if w % 2 == 0] if sizes["positional"] == "rope" else WIDTHS
    st.select_slider(LABELS["head_dim"], **moved, **kit.args("head_dim", widths),
                     help=f"E / nhead = {d_k} unless set apart (Qwen3: 128 at E / nhead = 64); moves with E and nhead "
                          "while it equals E / nhead." + (" Even: RoPE turns pairs." if sizes["positional"] == "rope"
                                                          else ""))
    st.checkbox(LABELS["qk_norm"], **moved, **kit.args("qk_norm"))


def _window(cfg: TransformerConfig, sizes: dict[str, Any], kit: Kit) -> None:
    if sizes["arch"] != "decoder-only" or cfg.attention == "mla":
        if "window" not in kit.used:
            return
    trained = "window" in kit.used
    st.radio(LABELS["window"], list(WINDOW_NAMES), format_func=WINDOW_NAMES.__getitem__, horizontal=True,
             **_on_move(kit), disabled=trained,
             **({"index": int(bool(cfg.window)), "key": "shown_window_on"} if trained
                else _choice_args(WINDOW_KEY, WINDOW_NAMES, kit)),
             help="A causal query sees only the last W positions: the KV cache stops growing at W (Mistral-7B: 4096).")
    if not cfg.window:
        return
    moved = _on_move(kit)
    st.select_slider(LABELS["window_W"], **moved, **kit.args("window", LENGTHS))
    every = [0, *range(2, sizes["layers"] + 1)]
    st.select_slider(LABELS["global_every"], **moved, **_lone(kit.args("global_every", every)),
                     format_func=lambda k: "0 (all windowed)" if k == 0 else str(k),
                     help="0: every layer windowed; k: layers k, 2k, ... attend in full (Gemma, GPT-OSS alternate).")


def _scales(cfg: TransformerConfig, kit: Kit) -> None:
    if cfg.positional != "relative" and cfg.scale_scores and cfg.scale_embeddings:
        return
    moved = _on_move(kit)
    st.checkbox(LABELS["scale_scores"], **moved, **kit.args("scale_scores"),
                help="T5 leaves the scores without 1/√d_k: its initialisation folds it into the weights.")
    st.checkbox(LABELS["scale_embeddings"], **moved, **kit.args("scale_embeddings"),
                help="T5 adds no √E to its embeddings (and a tied output layer reads the decoder output / √E).")


def _buckets(kit: Kit) -> None:
    moved = _on_move(kit)
    st.slider(LABELS["relative_buckets"], BUCKET_RANGE[0], BUCKET_RANGE[1], **moved, **kit.args("relative_buckets"),
              help="Half the buckets for each direction in the encoder; exact offsets first, then logarithmic steps.")
    st.select_slider(LABELS["relative_max_distance"], **moved, **kit.args("relative_max_distance", LENGTHS),
                     help="Offsets this far and farther share the last bucket.")


def _lone(args: dict[str, Any]) -> dict[str, Any]:
    """A select_slider with one option cannot move (Streamlit refuses a range of one): shown disabled."""
    return args | {"disabled": args["disabled"] or len(args["options"]) == 1}
