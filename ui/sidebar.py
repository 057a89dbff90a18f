"""The shared sidebar: the sliders that set the config every page reads, and the URL that reproduces it.

Data flows one way: widgets -> TransformerConfig (kept in st.session_state, so every page checks
against the same model). A link's values are read into the widgets before they are drawn
(ui/config_link.py snaps them, with a warning when they move), and the config is written back into
the link after, so that a link always reproduces what the page shows.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core import DEFAULT, PRESETS, TransformerConfig, divisors
from core.config import ACTIVATIONS, ARCHS, NORMS, POSITIONAL_KINDS, SIZE_NAMES
from render.diagram import ACTIVATION_NAMES, NORM_NAMES
from render.markdown import as_literal
from ui.config_link import (CONFIG_FIELDS, FFS, LAYER_RANGE, LENGTHS, MAX_NHEAD_OPTION, N_RANGE, VOCABS, WIDTHS,
                            attention_kind, choices_twice, link_params, link_text, nearest, nhead_options,
                            snap_config)
from ui.streamlit_internals import history_navigation
from ui.your_text import text_link_values
from ui.page_links import PAGE_CHOICES, Choice, link_values, read_choices, settle, whole_number


# Widget key -> (config field, label). Labels carry the learner's symbol; tests find sliders by it.
LABELS = {
    **SIZE_NAMES,
    "layers": "layers — encoder and decoder layers, each",
    "d_ff": "d_ff — FFN hidden width (dim_feedforward)",
    "positional": "positional encoding",
    "tie_embeddings": "tie_embeddings — one matrix for both embeddings and the output layer",
    "arch": "arch — family",
    "norm_first": "norm_first — where each sub-layer's norm sits",
    "norm": "norm — the normalization",
    "activation": "activation — the FFN's nonlinearity",
    "nhead_kv": "nhead_kv — K/V heads",
    "bias": "bias — biases in the linear layers and norms",
}
# A single stack has one sequence and one kind of layer: its sliders say so, not "source" and "encoder and decoder".
ONE_STACK_LABELS = {
    "decoder-only": {"M": "M — sequence length", "layers": "layers — decoder layers",
                     "tie_embeddings": "tie_embeddings — one matrix for the embedding and the output layer"},
    "encoder-only": {"M": "M — sequence length", "layers": "layers — encoder layers",
                     "tie_embeddings": "tie_embeddings — one matrix for the embedding and the output layer"},
}
ARCH_NAMES = {"encoder-decoder": "encoder-decoder (the paper, T5)", "decoder-only": "decoder-only (GPT, Llama)",
              "encoder-only": "encoder-only (BERT)"}
NORM_FIRST_NAMES = {False: "post-norm (the paper)", True: "pre-norm (GPT-2, Llama)"}
POSITIONAL_NAMES = {"sinusoidal": "sinusoidal", "learned": "learned", "rope": "RoPE", "none": "none",
                    "relative": "relative (T5)"}
CUSTOM = "(custom)"
STATE_KEY = "cfg"
_WIDGET = "w_"  # widget keys are "w_N", "w_E", ...
_SET_BY_CODE = "widgets_set_by_code"
_WANTED_NHEAD = "nhead_wanted"  # the heads the learner last chose (slider, link or preset)
_WANTED_POSITIONAL = "positional_wanted"  # the positions last chosen: RoPE waits out an odd d_k

# What the browser may still show of a widget that code set: a slider pressed again before the run that
# set d_ff (or the preset box) reached the browser sends the value the browser still had, and Streamlit
# takes it for a move of that widget. Held down, the E arrow key left the slider at 16 while the page
# ran at 19; the preset box's stale name, taken for a choice, put the whole config back to the preset.
_SEEN = "sidebar_seen"  # every sidebar widget's value as the server last had it, code's settings included
_PENDING = "sidebar_pending"  # key -> (the value code set, the values the browser may still show instead)
_SETTLED = "sidebar_settled"  # None, or the keys this message sent stale (its changes are sorted); each run clears it


def _sidebar_keys() -> tuple[str, ...]:
    return ("w_preset", *(_WIDGET + name for name in CONFIG_FIELDS))


def _set_widget(key: str, value: Any) -> None:
    """Give a sidebar widget a value from code (URL, preset, a snapped nhead) for the next render."""
    state = st.session_state
    if key in state and state[key] != value:
        _, stale = state.setdefault(_PENDING, {}).get(key, (None, frozenset()))
        state[_PENDING][key] = (value, (stale | {state[key]}) - {value})  # what the browser may still show
    state[key] = value
    state.setdefault(_SET_BY_CODE, set()).add(key)
    if _SEEN in state:
        state[_SEEN][key] = value


def _drop_stale_values() -> frozenset[str]:
    """Called first by every sidebar callback: put back what the browser sent only because it had not yet
    seen code's setting, and keep the rest as the learner's moves.

    A learner moves one widget per message. So when a message changes more than one, those changed
    back to a value the browser may still show (``_PENDING``) are stale: code's value goes back in. A
    lone change is the learner's, even to a value seen before (the preset they had, chosen again). A
    widget the message leaves at code's value has reached the browser: nothing about it is pending.
    Returns the keys put back, so that a callback of one of them does nothing more.
    """
    state = st.session_state
    seen, pending = state.get(_SEEN), state.get(_PENDING, {})
    if seen is None:
        return frozenset()
    if state.get(_SETTLED) is not None:  # once per message: its first callback sees all it changed
        return state[_SETTLED]
    changed = [key for key in _sidebar_keys() if key in state and state[key] != seen.get(key)]
    for key in [key for key in pending if key not in changed]:
        del pending[key]
    stale = frozenset(key for key in changed if key in pending and state[key] in pending[key][1]
                      and len(changed) > 1)
    for key in changed:
        if key in stale:
            _set_widget(key, pending[key][0])
        else:
            pending.pop(key, None)
            seen[key] = state[key]
    state[_SETTLED] = stale
    return stale


def _set_widgets(cfg: TransformerConfig, asked_nhead: int | None = None) -> None:
    """Set every sidebar widget to ``cfg``. ``asked_nhead`` is the nhead a link asked for, before it
    was snapped to a divisor of E."""
    for name in CONFIG_FIELDS:
        # A single stack's M_target is None; its slider, shown again for the encoder-decoder, starts at M.
        _set_widget(_WIDGET + name, cfg.M if name == "M_target" and cfg.M_target is None else getattr(cfg, name))
    st.session_state[_WANTED_POSITIONAL] = cfg.positional
    # The heads the learner wants stay wanted while this config's nhead is what E snaps them to: a link
    # with E=17&nhead=4 (one head), or Back to E = 17, then E = 20 gives 4 heads, not the 1 snapped to.
    # The session's wanted heads come first: Back's entry has the snapped nhead = 1 in its link.
    heads = nhead_options(cfg.E)
    st.session_state[_WANTED_NHEAD] = next(
        (n for n in (st.session_state.get(_WANTED_NHEAD), asked_nhead) if n and nearest(n, heads) == cfg.nhead),
        cfg.nhead)
    # What M_target, d_ff and nhead_kv follow from here (_follow, _architecture): this config's M, E and nhead,
    # even when the learner's next move comes before the run that would record them (a preset, then at once
    # a slider).
    st.session_state[_FOLLOWED] = {"M": cfg.M, "E": cfg.E, "nhead": cfg.nhead}


def _current(key: str, arg: str = "value", options: list | None = None) -> dict[str, Any]:
    """The widget's current value as its default, unless code set it this run.

    Streamlit's frontend falls back to a widget's *default* when it loses the widget's state (seen
    when a page switch overtakes a session's first run, several sessions at once): with the current
    value as the default, that fallback changes nothing. When code has just set the value through
    session state, passing a default too is an error in Streamlit, so none is passed then.
    """
    if key in st.session_state.get(_SET_BY_CODE, ()) or key not in st.session_state:
        return {}
    value = st.session_state[key]
    if options is not None:
        return {arg: options.index(value)} if value in options else {}
    return {arg: value}


def _apply_preset() -> None:
    _drop_stale_values()
    forget_link_warnings()
    preset = PRESETS.get(st.session_state.get("w_preset"))
    if preset is not None:
        st.session_state.pop(_WANTED_NHEAD, None)  # the preset's heads are the ones wanted from now on
        _set_widgets(preset)


def _choose_nhead() -> None:
    """The nhead slider moved: that many heads is what the learner wants, whatever E does next."""
    if "w_nhead" in _drop_stale_values():  # the browser had not seen E snap it yet: nobody chose it
        return
    _mark_custom()
    st.session_state[_WANTED_NHEAD] = st.session_state["w_nhead"]


def _mark_custom() -> None:
    """A slider moved: the config is no longer the named preset, and the URL's warnings are old news."""
    _drop_stale_values()
    if st.session_state.get("w_preset") != CUSTOM:
        _set_widget("w_preset", CUSTOM)
    forget_link_warnings()


def forget_link_warnings() -> None:
    """The learner changed something (a slider, a preset, a page's own choice): what the link asked
    for is old news, so its warning goes."""
    st.session_state["url_warnings"] = []
    st.session_state["view_warnings"] = ("", [])


_FOLLOWED = "followed_sources"  # M, E and nhead as the sidebar last had them, for _follow and _architecture


def _choose_positional() -> None:
    """The positions radio moved: that kind is wanted, and RoPE stays wanted through an odd d_k."""
    if "w_positional" in _drop_stale_values():  # the browser had not seen code set it: nobody chose it
        return
    _mark_custom()
    st.session_state[_WANTED_POSITIONAL] = st.session_state["w_positional"]


def _follow(source: str, follower: str, rule) -> None:
    """Move ``follower`` with ``source`` while it still equals ``rule`` of the source's last value.

    M_target starts equal to M and d_ff at 4E, as in the paper. A teacher who set M = 32 or E = 512
    got a target of 8 and a d_ff of 64 beside it, and the decoder's rows and the parameter count no
    longer matched their slides. A follower set apart by hand stays where it was put.

    The follower's own widget is compared, not the last run's config: a run cut short by the next
    move (Streamlit's fast reruns) would otherwise leave that config a move behind. The source's
    value before this move is kept for the same reason (_FOLLOWED), by this callback and each run."""
    _mark_custom()  # first, as every callback: it drops what the browser sent stale (_drop_stale_values)
    before = st.session_state.get(_FOLLOWED, {}).get(source)
    now = st.session_state[_WIDGET + source]
    if before is not None and st.session_state.get(_WIDGET + follower) == rule(before):
        _set_widget(_WIDGET + follower, rule(now))
    st.session_state.setdefault(_FOLLOWED, {})[source] = now


def _matching_preset(cfg: TransformerConfig) -> str:
    """The preset whose sliders all equal this config's, or CUSTOM."""
    for name, preset in PRESETS.items():
        if all(getattr(preset, f) == getattr(cfg, f) for f in CONFIG_FIELDS):
            return name
    return CUSTOM


def _read_url(page: str) -> None:
    """Take the config, and the page's own choices, from the URL on a session's first run and after
    Back or Forward.

    Any other run keeps the sidebar's own values: the URL follows them, not the other way round.
    Values that had to change are listed in a warning at the top of the page (link_warning); those
    about the page's choices are kept for that page only, so another page never shows them.
    """
    first = "url_read" not in st.session_state
    if not first and not history_navigation():
        return
    choices = PAGE_CHOICES.get(page, ())
    every = {k: st.query_params.get_all(k) for k in st.query_params}  # ?N=3&N=5: N is ["3", "5"], for _set_twice
    query = {k: values[-1] for k, values in every.items()}  # the last of each, as st.query_params.get reads it
    elsewhere = {choice.name.lower(): other for other, theirs in PAGE_CHOICES.items() if other != page
                 for choice in theirs}
    params, unknown = link_params(every, own=[choice.name for choice in choices], elsewhere=elsewhere)
    if not first and not params:
        # An entry that names no config: Streamlit clears the query on a page switch and sometimes
        # leaves the bare page in the history before the sidebar writes the config back. Going
        # Back through it keeps the config the learner has.
        return
    st.session_state["url_read"] = True
    cfg, warnings = snap_config(params)
    st.session_state["url_warnings"] = unknown + warnings
    # A link without nhead asks for the default's heads, as snap_config reads it (min(2, E) heads).
    asked = whole_number(params["nhead"]) if "nhead" in params else DEFAULT.nhead
    _set_widgets(cfg, asked if asked is not None and asked >= 1 else None)
    _set_widget("w_preset", _matching_preset(cfg))
    view, view_warnings = read_choices(choices, query, cfg, st.session_state)
    st.session_state.update(view)
    st.session_state["view_warnings"] = (page, choices_twice(choices, every) + view_warnings)


def _preset_help() -> str:
    """The preset box's help: every preset's family, sizes and parts, which its name, short enough to read
    whole in the box, leaves out (so does the list, whose lines are no wider than the box)."""
    return ("Start from a named configuration; every slider stays movable. Each preset's sizes, with d_ff = 4E, "
            "post-norm, LayerNorm, ReLU, biases and sinusoidal positions unless said; *tied*: one matrix for both "
            "embeddings and the output layer (a single stack has one embedding):\n\n"
            # One line each: the tooltip is as tall as a 768 px window allows, and cut the last presets off there.
            + "\n".join(f"- **{name}**: {preset_parts(c)}" for name, c in PRESETS.items()))


def preset_parts(c: TransformerConfig) -> str:
    """One preset's family, sizes and the parts it changes from the paper's, on one line."""
    layers = f"{c.layers}+{c.layers} layers" if c.arch == "encoder-decoder" else f"{c.layers} layers"
    heads = f"nhead={c.nhead}" + ("" if c.nhead_kv == c.nhead else f", nhead_kv={c.nhead_kv}")
    parts = [c.arch, f"N={c.N}", f"M={c.M}", f"E={c.E}", heads, layers, f"vocab {c.vocab_size:,}"]
    parts += [] if c.d_ff == 4 * c.E else [f"d_ff={c.d_ff}"]
    parts += [] if c.positional == "sinusoidal" else [f"{POSITIONAL_NAMES[c.positional]} positions"]
    parts += ["pre-norm"] if c.norm_first else []
    parts += [] if c.norm == "layernorm" else [NORM_NAMES[c.norm]]
    parts += [] if c.activation == "relu" else [ACTIVATION_NAMES[c.activation]]
    parts += [] if c.bias else ["no bias"]
    parts += ["tied"] if c.tie_embeddings else []
    return ", ".join(parts)


def sidebar_config(page: str = "") -> TransformerConfig:
    """Render the shared sidebar and return the config it describes (also kept in session state).

    The entry script calls it on every run, so every page sees the same config; nhead only offers
    divisors of E, so no slider position can make an invalid config. ``page`` is the url_path of the
    page about to run: its own choices (ui.page_links) go into the URL beside the config.
    """
    st.session_state[_SETTLED] = None  # the callbacks of the message that started this run are done
    _read_url(page)
    sb = st.sidebar
    state = st.session_state
    arch = state.get("w_arch", DEFAULT.arch)  # the family radio, drawn below, was set before this run
    labels = LABELS | ONE_STACK_LABELS.get(arch, {})
    sb.header("Model sizes")
    sb.selectbox("Preset", [CUSTOM, *PRESETS], key="w_preset", on_change=_apply_preset,
                 help=_preset_help())
    custom = {"on_change": _mark_custom}
    sb.slider(LABELS["N"], *N_RANGE, key="w_N", **custom, **_current("w_N"))
    sb.select_slider(labels["M"], LENGTHS, key="w_M", on_change=_follow, args=("M", "M_target", lambda m: m),
                     **_current("w_M"))
    if arch == "encoder-decoder":  # the target length is the decoder's own, beside an encoder
        if "w_M_target" not in state:  # not drawn for a single stack, Streamlit forgot it: it starts at M
            _set_widget("w_M_target", state["w_M"])
        sb.select_slider(LABELS["M_target"], LENGTHS, key="w_M_target", **custom, **_current("w_M_target"),
                         help="Moves with M while the two are equal; set it apart to see the decoder's own length.")
    sb.select_slider(LABELS["E"], WIDTHS, key="w_E", on_change=_follow, args=("E", "d_ff", lambda e: 4 * e),
                     **_current("w_E"))
    heads = nhead_options(st.session_state["w_E"])
    # nhead is the divisor of E nearest the heads the learner chose, not the last one snapped to: stepping
    # E from 16 to 20 with nhead = 4 passed the prime 17, snapped to 1 there and stayed at 1.
    nhead = nearest(st.session_state.get(_WANTED_NHEAD) or st.session_state.get("w_nhead") or 1, heads)
    if st.session_state.get("w_nhead") != nhead:
        _set_widget("w_nhead", nhead)
    # With one choice (E = 1) a slider is a lone dot with no track: shown greyed out, and said in words.
    sb.select_slider(LABELS["nhead"], heads, key="w_nhead", on_change=_choose_nhead, **_current("w_nhead"),
                     disabled=len(heads) == 1,
                     help="Only divisors of E are offered: each head gets d_k = E / nhead dimensions.")
    more = len(divisors(st.session_state["w_E"])) > len(heads)  # divisors above MAX_NHEAD_OPTION not offered
    d_k = st.session_state["w_E"] // st.session_state["w_nhead"]
    if len(heads) == 1:
        said = (f"E = {st.session_state['w_E']} has one divisor, so nhead = 1 is the only choice; a larger E "
                f"offers more heads. d_k = {d_k}.")
    else:
        said = (f"E = {st.session_state['w_E']} splits evenly into nhead ∈ {{{', '.join(map(str, heads))}"
                f"{', …' if more else ''}}}{f' (the slider stops at {MAX_NHEAD_OPTION})' if more else ''}; "
                f"d_k = {d_k}.")
    # Said where the learner is looking: a step of E can move nhead, and the table's new head count would
    # go unnoticed. Not with one divisor, which the words above explain, nor for heads that divide E past the slider's end.
    wanted = st.session_state.get(_WANTED_NHEAD)
    if wanted and wanted != nhead and len(heads) > 1 and st.session_state["w_E"] % wanted:
        said += (f" nhead = {wanted}, as set before, does not divide E = {st.session_state['w_E']}, so nhead is "
                 f"{nhead} for now, the nearest divisor; it goes back to {wanted} when E allows.")
    sb.caption(said)
    sb.select_slider(LABELS["vocab_size"], VOCABS, key="w_vocab_size", **custom, **_current("w_vocab_size"))
    sb.slider(labels["layers"], *LAYER_RANGE, key="w_layers", **custom, **_current("w_layers"))
    sb.select_slider(LABELS["d_ff"], FFS, key="w_d_ff", **custom, **_current("w_d_ff"),
                     help="Moves with E while it is 4E, the paper's choice; set it apart and it stays put.")
    sb.checkbox(labels["tie_embeddings"], key="w_tie_embeddings", **custom, **_current("w_tie_embeddings"),
                help="The paper shares one vocab_size × E matrix between both embeddings and the final linear layer; "
                     "GPT-2 and GPT-3 share it too, Llama-2 does not.")
    _architecture(sb, nhead, d_k)
    st.session_state[_SET_BY_CODE] = set()
    values = {name: st.session_state.get(_WIDGET + name) for name in CONFIG_FIELDS}
    if values["arch"] != "encoder-decoder":
        values["M_target"] = None  # one stack, one sequence of M tokens
    try:
        cfg = TransformerConfig(**values)
    except ValueError as exc:  # cannot happen through the sliders; kept as a visible safety net
        sb.error(str(exc))
        cfg = DEFAULT
    st.session_state[STATE_KEY] = cfg
    st.session_state[_FOLLOWED] = {"M": cfg.M, "E": cfg.E, "nhead": cfg.nhead}
    st.session_state[_SEEN] = {key: st.session_state[key] for key in _sidebar_keys() if key in st.session_state}
    _write_url(cfg, values, PAGE_CHOICES.get(page, ()), page)
    view_page, view_warnings = st.session_state.get("view_warnings", ("", []))
    link_warning(st.session_state.get("url_warnings", []) + (view_warnings if view_page == page else []))
    return cfg


def _architecture(sb, nhead: int, d_k: int) -> None:
    """The Architecture group: the family and the parts that tell the paper's model from GPT's and Llama's.

    Every choice it offers makes a valid config with the sizes above: nhead_kv only divides nhead, and
    RoPE, which turns pairs of dimensions, is offered only for an even d_k."""
    state = st.session_state
    custom = {"on_change": _mark_custom}
    sb.header("Architecture")
    sb.radio(LABELS["arch"], list(ARCHS), key="w_arch", format_func=ARCH_NAMES.__getitem__, **custom,
             **_current("w_arch", "index", list(ARCHS)),
             help="Encoder-decoder: the paper's two stacks, the decoder reading the encoder through cross-attention. "
                  "Decoder-only: one stack with the causal mask, predicting the next token. Encoder-only: one stack "
                  "that reads every position both ways. A single stack has one sequence, of M tokens.")
    flags = [False, True]
    sb.radio(LABELS["norm_first"], flags, key="w_norm_first", format_func=NORM_FIRST_NAMES.__getitem__,
             horizontal=True, **custom, **_current("w_norm_first", "index", flags),
             help="Post-norm: x = norm(x + sublayer(x)), as the paper. Pre-norm: x = x + sublayer(norm(x)), with one "
                  "final norm after the last layer.")
    sb.radio(LABELS["norm"], list(NORMS), key="w_norm", format_func=NORM_NAMES.__getitem__, horizontal=True,
             **custom, **_current("w_norm", "index", list(NORMS)),
             help="RMSNorm divides by the root mean square alone: no mean subtracted, no shift (β).")
    sb.radio(LABELS["activation"], list(ACTIVATIONS), key="w_activation", format_func=ACTIVATION_NAMES.__getitem__,
             horizontal=True, **custom, **_current("w_activation", "index", list(ACTIVATIONS)),
             help="SwiGLU gates the FFN: (SiLU(x W1) ⊙ x W3) W2, three matrices of E · d_ff weights each (W1 and W3 "
                  "in, W2 out) where ReLU and GELU have two.")
    # RoPE turns d_k's dimensions in pairs: an odd d_k has none to offer, and a RoPE chosen before waits.
    kinds = [kind for kind in POSITIONAL_KINDS if kind != "rope" or d_k % 2 == 0]
    wanted = state.get(_WANTED_POSITIONAL) or state.get("w_positional") or DEFAULT.positional
    positional = wanted if wanted in kinds else DEFAULT.positional
    if state.get("w_positional") != positional:
        _set_widget("w_positional", positional)
    sb.radio(LABELS["positional"], kinds, key="w_positional", format_func=POSITIONAL_NAMES.__getitem__,
             horizontal=True, on_change=_choose_positional, **_current("w_positional", "index", kinds),
             help="Sinusoidal and learned positions are added to the token embeddings; RoPE rotates each head's "
                  "queries and keys by their positions instead; relative (T5) adds a learned bias per head and offset "
                  "bucket to the scores; none gives the model no positions at all."
                  + ("" if "rope" in kinds else f" RoPE is not offered now: it turns pairs of dimensions, and d_k = "
                                                f"E/nhead = {d_k} is odd."))
    if wanted == "rope" and positional != "rope":
        sb.caption(f"RoPE turns pairs of dimensions, so it needs an even d_k; d_k = E/nhead = {d_k} is odd, so "
                   f"positions are {positional} for now. RoPE comes back when d_k is even.")
    # nhead_kv follows nhead: MHA stays MHA, any other keeps the nearest divisor of the new nhead.
    kv_heads = divisors(nhead)
    before = state.get(_FOLLOWED, {}).get("nhead")
    kv = state.get("w_nhead_kv") or nhead
    if before is not None and before != nhead and kv == before:
        kv = nhead
    if kv not in kv_heads:
        kv = nearest(kv, kv_heads)
    if state.get("w_nhead_kv") != kv:
        _set_widget("w_nhead_kv", kv)
    sb.select_slider(LABELS["nhead_kv"], kv_heads, key="w_nhead_kv", **custom, **_current("w_nhead_kv"),
                     format_func=lambda h: f"{h} ({attention_kind(nhead, h)})", disabled=len(kv_heads) == 1,
                     help="Only divisors of nhead are offered: each K/V head serves nhead / nhead_kv query heads. "
                          "MHA: one K/V head per query head (the paper); GQA: groups share one (Llama-2-70B); "
                          "MQA: one K/V head for all.")
    group = nhead // kv
    sb.caption(f"nhead_kv = {kv} of nhead = {nhead}: {attention_kind(nhead, kv)}, "
               + ("every query head has its own K and V." if group == 1 else
                  f"each K/V head serves {group} query heads."))
    sb.checkbox(LABELS["bias"], key="w_bias", **custom, **_current("w_bias"),
                help="The paper's linear layers add a bias, and LayerNorm a shift β; Llama-2 has neither.")


def _write_url(cfg: TransformerConfig, values: dict[str, Any], choices: tuple[Choice, ...], page: str) -> None:
    """Put the config and the page's own choices in the URL, in one write: each write is a step in
    the browser's history, so a second one would take a Back of its own. The query is replaced
    whole, so another page's choices never ride along (Streamlit also clears them on a page switch).
    The choices are first kept in range here (settle), before the page draws its widgets."""
    settle(choices, cfg, st.session_state)
    wanted = ({k: link_text(v) for k, v in values.items() if v is not None} | link_values(choices, cfg, st.session_state)
              | text_link_values(page))
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)


def link_warning(messages: list[str]) -> None:
    """What a link asked for that could not be used as written (a value moved to the nearest one the
    page can show, a name left out), in one warning at the top of the page, not in the sidebar: a
    phone collapses the sidebar, and a learner who followed a mistyped link saw no warning at all,
    only sizes that were not the ones asked for. It goes once the learner changes anything
    (forget_link_warnings)."""
    if messages:
        st.warning("**Part of this link could not be used as written:**\n\n"
                   + "\n".join(f"- {as_literal(message)}" for message in messages), icon=":material/link_off:")


def current_config() -> TransformerConfig:
    """The config the sidebar set on this run (the default before the sidebar has run)."""
    return st.session_state.get(STATE_KEY, DEFAULT)
