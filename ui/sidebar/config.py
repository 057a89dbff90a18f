"""The shared sidebar: works out, once per script run, the config that runs, and shows it.

Data flows one way: link and sliders -> the learner's text's sizes -> the Training lab's trained model ->
one ``Run`` (sidebar_config returns it, streamlit_app.py hands it to the page, the page reads this_run()).
A field that the text or the trained model sets is shown in its widget, disabled, with one line at the
top that says why and gives the sliders back. A link's values are read into the widgets before they are
drawn (ui/link/config.py snaps them, with a warning when they move), and the config is written back into
the link after, so that a link always reproduces what the page shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

import streamlit as st

from core import DEFAULT, PRESETS, TransformerConfig, divisors
from core.config import ACTIVATIONS, ARCHS, NORMS, POSITIONAL_KINDS, SIZE_LABELS
from core.train import TrainedModel
from render.diagram import ACTIVATION_NAMES, NORM_NAMES
from render.markdown import as_literal
from render.words import counted
from ui.link import TEXT_PAGES, link_query, read_link
from ui.link.config import (CONFIG_FIELDS, FFS, LAYER_RANGE, LENGTHS, MAX_NHEAD_OPTION, N_RANGE, SIZE_FIELDS, VOCABS,
                            WIDTHS, attention_kind, config_values, nearest, nhead_options)
from ui.sections.your_text import (YourText, clear_text, current_text, leave_trained, sizes_set_words, text_link_values,
                                   text_sizes, trained_model)
from ui.server.streamlit_internals import history_navigation
from ui.sidebar.parts import CHOICE_KEYS, LAST, Kit, part_controls, set_choices


# Widget key -> (config field, label). Labels carry the learner's symbol; tests find sliders by it.
LABELS = {
    **SIZE_LABELS,
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
TRAINED_PRESET = "(the Training lab's model)"
_RUN = "sidebar_run"  # the Run handed to the page (this_run); callbacks read the last run's
_SHOWN = "shown_"  # a disabled copy of a widget, showing the value a text or the trained model sets
_WIDGET = "w_"  # widget keys are "w_N", "w_E", ...
_SET_BY_CODE = "widgets_set_by_code"
_WANTED_NHEAD = "nhead_wanted"  # the heads the learner last chose (slider, link or preset)
_WANTED_KV = "nhead_kv_wanted"  # the K/V heads the learner last chose; None: as many as nhead (MHA)
_WANTED_POSITIONAL = "positional_wanted"  # the positions last chosen: RoPE waits out an odd d_k
_LINKED = "sidebar_linked"  # a session's first run: widget key -> the link's value, each widget's default
_FIRST_MOVES = "sidebar_first_moves"  # widgets a new session's first message had moved off the link's values
ARCHITECTURE_OPEN = "sidebar_architecture"  # the Architecture group's expander: open (its widgets drawn) or not
_ARCHITECTURE_KEYS = tuple(_WIDGET + name for name in ("arch", "norm_first", "norm", "activation", "positional",
                                                       "nhead_kv", "bias"))

# A key pressed before code's setting reached the browser sends the browser's stale value (docs/layout.md).
_SEEN = "sidebar_seen"  # every sidebar widget's value as the server last had it, code's settings included
_PENDING = "sidebar_pending"  # key -> (the value code set, the values the browser may still show instead)
_SETTLED = "sidebar_settled"  # None, or the keys this message sent stale (its changes are sorted); each run clears it


@dataclass(frozen=True)
class Run:
    """The config that runs on this script run, and the plain facts the pages need about it."""

    cfg: TransformerConfig  # what every page traces and asks about
    sliders: TransformerConfig  # the sidebar's own: link, preset and sliders, before a text or trained model
    text: YourText | None = None  # the learner's text, when it sets N, M and vocab_size
    text_problem: str | None = None  # why the box's text was not used (no tokens), for the box to say
    trained: TrainedModel | None = None  # the Training lab's model, when the learner switched to it
    set_by: dict[str, Any] = field(default_factory=dict)  # field -> value the text or the trained model sets

    @property
    def tokens(self):
        """The learner's tokenized text, or None."""
        return None if self.text is None else self.text.tokens


def this_run() -> Run:
    """The Run the entry script handed to the page (the default's before any sidebar has run)."""
    run = st.session_state.get(_RUN)
    return run if isinstance(run, Run) else Run(DEFAULT, DEFAULT)


def give_to_page(run: Run) -> None:
    """Hand the run's config to the page about to run (and to the next run's callbacks), read by this_run()."""
    st.session_state[_RUN] = run


def _sidebar_keys() -> tuple[str, ...]:
    return ("w_preset", *(_WIDGET + name for name in CONFIG_FIELDS), *CHOICE_KEYS)


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


def _set_widgets(cfg: TransformerConfig, asked_nhead: int | None = None, put=_set_widget) -> None:
    """Set every sidebar widget to ``cfg`` with ``put`` (key, value). ``asked_nhead`` is the nhead a link
    asked for, before it was snapped to a divisor of E."""
    for name in CONFIG_FIELDS:
        # A single stack's M_target is None; its slider, shown again for the encoder-decoder, starts at M.
        put(_WIDGET + name, cfg.M if name == "M_target" and cfg.M_target is None else getattr(cfg, name))
    st.session_state[_WANTED_POSITIONAL] = cfg.positional
    # The heads wanted stay wanted while E snaps them: E=17&nhead=4, then E = 20, gives 4 heads again.
    heads = nhead_options(cfg.E)
    st.session_state[_WANTED_NHEAD] = next(
        (n for n in (st.session_state.get(_WANTED_NHEAD), asked_nhead) if n and nearest(n, heads) == cfg.nhead),
        cfg.nhead)
    kept_kv = st.session_state.get(_WANTED_KV)  # the same for K/V heads: Back to E = 17 keeps nhead_kv = 2 wanted
    st.session_state[_WANTED_KV] = (kept_kv if kept_kv and _kv_heads(cfg.nhead, kept_kv) == cfg.nhead_kv
                                    else None if cfg.nhead_kv == cfg.nhead else cfg.nhead_kv)
    # What M_target, d_ff and nhead_kv follow from here, even if the next move beats the next run.
    st.session_state[_FOLLOWED] = {"M": cfg.M, "E": cfg.E, "nhead": cfg.nhead}
    set_choices(cfg, put)  # the FFN's and the window's on/off, which no field holds
    st.session_state[LAST] = cfg  # the parts' followers (head_dim, top_k, ...) follow from here


_MISSING = object()


def _value(key: str, default: Any = None) -> Any:
    """A sidebar widget's value: the session's, or on a session's first run, before the widget is drawn,
    the link's (_read_url)."""
    state = st.session_state
    if key in state:
        return state[key]
    return state.get(_LINKED, {}).get(key, default)


def _default_unless_code_set(key: str, arg: str = "value", options: list | None = None) -> dict[str, Any]:
    """The widget's current value as its default (the link's on a session's first run), unless code set it
    this run.

    Streamlit's frontend falls back to a widget's *default* when it loses the widget's state (seen
    when a page switch overtakes a session's first run, several sessions at once): with the current
    value as the default, that fallback changes nothing. When code has just set the value through
    session state, passing a default too is an error in Streamlit, so none is passed then.
    """
    if key in st.session_state.get(_SET_BY_CODE, ()):
        return {}
    value = _value(key, _MISSING)
    if value is _MISSING:
        return {}
    if options is not None:
        return {arg: options.index(value)} if value in options else {}
    return {arg: value}


def _apply_preset() -> None:
    _drop_stale_values()
    forget_link_warnings()
    preset = PRESETS.get(st.session_state.get("w_preset"))
    if preset is not None:
        st.session_state.pop(_WANTED_NHEAD, None)  # the preset's heads are the ones wanted from now on
        st.session_state.pop(_WANTED_KV, None)
        _set_widgets(preset)


def _choose_nhead() -> None:
    """The nhead slider moved: that many heads is what the learner wants, whatever E does next."""
    if "w_nhead" in _drop_stale_values():  # the browser had not seen E snap it yet: nobody chose it
        return
    _mark_custom()
    st.session_state[_WANTED_NHEAD] = st.session_state["w_nhead"]


def _kv_heads(nhead: int, wanted: int | None) -> int:
    """nhead_kv at this nhead: as many as nhead for MHA (wanted None), else the divisor nearest the wanted."""
    return nhead if wanted is None else nearest(wanted, divisors(nhead))


def _choose_nhead_kv() -> None:
    """The nhead_kv slider moved: that many K/V heads is wanted (or MHA, when it equals nhead)."""
    if "w_nhead_kv" in _drop_stale_values():
        return
    _mark_custom()
    kv = st.session_state["w_nhead_kv"]
    st.session_state[_WANTED_KV] = None if kv == st.session_state.get("w_nhead") else kv


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


# M_target starts equal to M, d_ff at 4E: each moves with its source while it still equals this rule of it (_follow).
_FOLLOWS = {"w_M": ("M", "M_target", lambda m: m), "w_E": ("E", "d_ff", lambda e: 4 * e)}


def _first_moves() -> list[str]:
    """Called once every sidebar widget is drawn: on a session's first run, the widgets whose value is not the
    link's, the learner's own moves the browser sent (none on a fresh page load). The link's values are kept
    for the widgets not drawn, as _set_widgets would have set them."""
    state = st.session_state
    linked = state.pop(_LINKED, None)
    if linked is None:
        return []
    set_by_code = state.get(_SET_BY_CODE, set())
    moved = [key for key, value in linked.items()
             if key in state and key not in set_by_code and state[key] != value]
    for key, value in linked.items():
        if key not in state:
            _set_widget(key, value)
    return moved


def _replay_first_moves() -> None:
    """Run the callbacks of a new session's first moves (_first_moves), as Streamlit runs a moved widget's.

    Streamlit does not rerun a page whose browser reconnected to a new server, so a new session's first message
    can be the learner's next move, with every widget's value. The new session knows no callbacks yet: the move
    sets its widget, but nothing followed it (M_target, d_ff, the preset, the heads wanted). The first run reruns
    at once; here, before any widget is drawn again, each move's callback runs from the link's state."""
    for key in st.session_state.pop(_FIRST_MOVES, ()):
        if key in _FOLLOWS:
            _follow(*_FOLLOWS[key])
        else:
            {"w_preset": _apply_preset, "w_nhead": _choose_nhead, "w_nhead_kv": _choose_nhead_kv,
             "w_positional": _choose_positional}.get(key, _mark_custom)()


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
    link = read_link(page, {k: st.query_params.get_all(k) for k in st.query_params}, st.session_state)
    if not first and not link.gives_settings:
        # An entry that names no config: Streamlit clears the query on a page switch and sometimes
        # leaves the bare page in the history. Going Back through it keeps the config the learner has.
        return
    st.session_state["url_read"] = True
    st.session_state["url_warnings"] = link.warnings
    # A first run gives the link's values as defaults: a reconnected tab's first message is a move that must win.
    put = st.session_state.setdefault(_LINKED, {}).__setitem__ if first else _set_widget
    _set_widgets(link.cfg, link.asked_nhead, put)
    put("w_preset", _matching_preset(link.cfg))
    st.session_state.update(link.view)
    st.session_state["view_warnings"] = (page, link.view_warnings)


def _preset_help() -> str:
    """The preset box's help: every preset's family, sizes and parts, which its name, short enough to read
    whole in the box, leaves out (so does the list, whose lines are no wider than the box)."""
    return ("Start from a named configuration; every slider stays movable. Each preset's sizes, with d_ff = 4E, "
            "post-norm, LayerNorm, ReLU, biases and sinusoidal positions unless said; *tied*: one matrix for both "
            "embeddings and the output layer (a single stack has one embedding):\n\n"
            # One line each, so every preset fits in the tooltip of a laptop's window.
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
    parts += _new_parts(c)
    parts += ["tied"] if c.tie_embeddings else []  # last: the help's key says what *tied* means
    return ", ".join(parts)


def _new_parts(c: TransformerConfig) -> list[str]:
    """The experts, latent attention, head_dim, qk_norm, window and T5 scales a preset has, in a few words each."""
    parts = []
    if c.moe:
        dense = f", {c.first_dense_layers} dense first" if c.first_dense_layers else ""
        shared = f" + {c.n_shared_experts} shared" if c.n_shared_experts else ""
        parts.append(f"{counted(c.n_experts, 'expert')}{shared} (top {c.top_k}, d_ff_expert={c.d_ff_expert}{dense})")
    if c.attention == "mla":
        parts.append(f"MLA (kv_lora_rank={c.kv_lora_rank}, q_lora_rank={c.q_lora_rank}, "
                     f"rope_head_dim={c.rope_head_dim})")
    parts += [f"head_dim={c.head_dim}"] if c.attention == "mha" and c.head_dim * c.nhead != c.E else []
    parts += ["qk_norm"] if c.qk_norm else []
    parts += [f"window {c.window}" + (f", full every {c.global_every}" if c.global_every else "")] if c.window else []
    parts += [f"{c.relative_buckets} buckets to {c.relative_max_distance}"] if c.positional == "relative" else []
    parts += [] if c.scale_scores else ["no 1/√d_k"]
    return parts


def _in_use(arch: str, page: str) -> tuple[dict[str, Any], TrainedModel | None]:
    """The fields a text or the trained model sets, and their values, read before any widget is drawn: the
    box and the model choice live on the page, but their values are in the session already."""
    trained = trained_model()
    if trained is not None:
        values = {name: getattr(trained.config, name) for name in CONFIG_FIELDS}
        return {name: value for name, value in values.items() if value is not None}, trained
    return text_sizes(arch, page), None


def _shown_key(name: str, used: dict[str, Any]) -> str:
    """The key of the widget that shows field ``name``: the learner's own, or while a text or the trained model
    sets the field, a disabled copy holding the value in use."""
    key = _WIDGET + name
    if name not in used:
        return key
    shown = _SHOWN + name
    st.session_state[shown] = used[name]
    st.session_state.setdefault(_SET_BY_CODE, set()).add(shown)
    return shown


def _options_holding(options: list, value: Any) -> list:
    """A disabled copy's options: the slider's, and the value in use (a text's M may fall between steps)."""
    if value in options:
        return options
    return sorted({*options, value}) if isinstance(value, int) else [*options, value]


def _widget_args(name: str, options: list | None = None, *, used: dict[str, Any],
                 arg: str = "value") -> dict[str, Any]:
    """Key, default and disabled for field ``name``'s widget, and its options when it has a list of them."""
    key = _shown_key(name, used)
    disabled = key != _WIDGET + name
    out: dict[str, Any] = {"key": key, "disabled": disabled}
    if options is not None:
        out["options"] = options = _options_holding(options, st.session_state[key]) if disabled else options
    return out | _default_unless_code_set(key, arg, options if arg == "index" else None)


def _say_what_sets_fields(sb, used: dict[str, Any], trained: TrainedModel | None, page: str) -> None:
    """One line at the sidebar's top: what sets the greyed-out fields, and a button that gives the sliders back."""
    if trained is not None:
        sb.info("The Training lab's trained model is running: it sets every field below.",
                icon=":material/model_training:")
        sb.button("Back to the sliders' model", key="sidebar_leave_trained", on_click=leave_trained,
                  icon=":material/tune:")
    elif used:
        names = sizes_set_words("M_target" in used)
        # Another page's link has names of its own (the Cost page's tokens=), so only the box's pages carry the text.
        said = (f"Your text on this page sets {names}." if page in TEXT_PAGES else
                f"Your text on the Explorer sets {names} (this page's link leaves it out).")
        sb.info(said, icon=":material/edit_note:")
        sb.button("Clear the text, use the sliders", key="sidebar_clear_text", on_click=clear_text,
                  icon=":material/tune:")


def sidebar_config(page: str = "") -> Run:
    """Render the shared sidebar and return the Run: the config that runs on this script run.

    The entry script calls it on every run and hands the Run to the page (give_to_page); nhead only offers
    divisors of E, so no slider position can make an invalid config. ``page`` is the url_path of the page
    about to run: its own choices (ui.link.choices) go into the URL beside the config.
    """
    st.session_state[_SETTLED] = None  # the callbacks of the message that started this run are done
    _replay_first_moves()
    _read_url(page)
    sb = st.sidebar
    state = st.session_state
    used, trained = _in_use(_value("w_arch", DEFAULT.arch), page)
    for key in _sidebar_keys() if used else ():
        if key in state:  # kept while its widget is not drawn: Streamlit forgets an undrawn widget's value
            _set_widget(key, state[key])
    arch = used.get("arch", _value("w_arch", DEFAULT.arch))  # the family radio, drawn below, was set before
    labels = LABELS | ONE_STACK_LABELS.get(arch, {})
    _say_what_sets_fields(sb, used, trained, page)
    sb.header("Model sizes")
    presets = [CUSTOM, *PRESETS]
    if trained is None:
        sb.selectbox("Preset", presets, key="w_preset", on_change=_apply_preset, help=_preset_help(),
                     **_default_unless_code_set("w_preset", "index", presets))
    else:  # no preset made the trained model: a greyed copy names it, and the learner's preset waits
        sb.selectbox("Preset", [TRAINED_PRESET], key=_SHOWN + "preset", disabled=True, help=_preset_help())
    custom = {"on_change": _mark_custom}
    shown = partial(_widget_args, used=used)
    sb.slider(LABELS["N"], N_RANGE[0], max(N_RANGE[1], used.get("N", 0)), **custom, **shown("N"))
    sb.select_slider(labels["M"], on_change=_follow, args=_FOLLOWS["w_M"], **shown("M", LENGTHS))
    if arch == "encoder-decoder":  # the target length is the decoder's own, beside an encoder
        if _value("w_M_target") is None:  # not drawn for a single stack, Streamlit forgot it: it starts at M
            _set_widget("w_M_target", state["w_M"])
        sb.select_slider(LABELS["M_target"], **custom, **shown("M_target", LENGTHS),
                         help="Moves with M while the two are equal; set it apart to see the decoder's own length.")
    sb.select_slider(LABELS["E"], on_change=_follow, args=_FOLLOWS["w_E"], **shown("E", WIDTHS))
    heads = nhead_options(_value("w_E"))
    # The divisor of E nearest the heads the learner chose, not the last one snapped to: E 16 -> 17 -> 20 keeps 4.
    nhead = nearest(state.get(_WANTED_NHEAD) or _value("w_nhead") or 1, heads)
    if _value("w_nhead") != nhead:
        _set_widget("w_nhead", nhead)
    head_widget = shown("nhead", heads)
    sb.select_slider(LABELS["nhead"], on_change=_choose_nhead,
                     **head_widget | {"disabled": head_widget["disabled"] or len(heads) == 1},
                     help="Only divisors of E are offered: each head gets d_k = E / nhead dimensions.")
    sb.caption(_heads_words(used.get("E", _value("w_E")), used.get("nhead", nhead),
                            None if "nhead" in used else state.get(_WANTED_NHEAD)))
    sb.select_slider(LABELS["vocab_size"], **custom, **shown("vocab_size", VOCABS))
    sb.slider(labels["layers"], LAYER_RANGE[0], LAYER_RANGE[1], **custom, **shown("layers"))
    sb.select_slider(LABELS["d_ff"], **custom, **shown("d_ff", FFS),
                     help="Moves with E while it is 4E, the paper's choice; set it apart and it stays put.")
    sb.checkbox(labels["tie_embeddings"], **custom, **shown("tie_embeddings"),
                help="The paper shares one vocab_size × E matrix between both embeddings and the final linear layer; "
                     "GPT-2 and GPT-3 share it too, Llama-2 does not.")
    group = _architecture(sb, nhead, _value("w_E") // nhead, used)
    summary = sb.empty()  # the group's choices in words while it is closed, once the config is known
    values = {name: _value(_WIDGET + name) for name in SIZE_FIELDS}
    if values["arch"] != "encoder-decoder":
        values["M_target"] = None  # one stack, one sequence of M tokens
    parts, notes = part_controls(group, values, Kit(_set_widget, partial(_widget_args, used=used), _mark_custom, used,
                                                    _value))
    for note in notes:  # a part the family or the sizes leave out for now
        sb.caption(note)
    moved = _first_moves()
    state[_SET_BY_CODE] = set()
    if moved:
        state[_FIRST_MOVES] = moved
        st.rerun()
    try:
        sliders = TransformerConfig(**values | parts)
    except ValueError as exc:  # cannot happen through the sliders; kept as a visible safety net
        sb.error(str(exc))
        sliders = DEFAULT
    state[LAST] = sliders
    state[_FOLLOWED] = {"M": sliders.M, "E": sliders.E, "nhead": sliders.nhead}
    state[_SEEN] = {key: state[key] for key in _sidebar_keys() if key in state}
    if trained is not None:
        run = Run(trained.config, sliders, trained=trained, set_by=used)
    else:
        mine, problem = current_text(sliders)
        run = Run(sliders if mine is None else mine.cfg, sliders, mine, problem, set_by=used)
    _write_url(run, page)
    view_page, view_warnings = state.get("view_warnings", ("", []))
    link_warning(state.get("url_warnings", []) + (view_warnings if view_page == page else []))
    if group is None:
        summary.caption(architecture_words(run.sliders if trained is None else run.cfg))
    return run


def _heads_words(E: int, nhead: int, wanted: int | None) -> str:
    """What E allows of nhead, and, where E forced nhead away from the learner's choice, that it comes back."""
    heads = nhead_options(E)
    d_k = E // nhead
    if len(heads) == 1:  # the slider is a lone dot, greyed out: said in words
        return f"E = {E} has one divisor, so nhead = 1 is the only choice; a larger E offers more heads. d_k = {d_k}."
    more = len(divisors(E)) > len(heads)  # divisors above MAX_NHEAD_OPTION not offered
    said = (f"E = {E} splits evenly into nhead ∈ {{{', '.join(map(str, heads))}{', …' if more else ''}}}"
            f"{f' (the slider stops at {MAX_NHEAD_OPTION})' if more else ''}; d_k = {d_k}.")
    if wanted and wanted != nhead and E % wanted:  # said where the learner looks: a step of E moved nhead
        said += (f" nhead = {wanted}, as set before, does not divide E = {E}, so nhead is {nhead} for now, the "
                 f"nearest divisor; it goes back to {wanted} when E allows.")
    return said


def _architecture(sb, nhead: int, d_k: int, used: dict[str, Any]):
    """The Architecture group: the family and the parts that tell the paper's model from GPT's and Llama's.

    Its widgets are drawn only while it is open (a browser draws each control on every run); closed, they keep
    their values. Returns the open group, for the parts' controls, or None. Every choice it offers makes a valid
    config with the sizes above: nhead_kv only divides nhead, and RoPE is offered only for an even d_k."""
    state = st.session_state
    # RoPE turns d_k's dimensions in pairs: an odd d_k has none to offer, and a RoPE chosen before waits.
    kinds = [kind for kind in POSITIONAL_KINDS if kind != "rope" or d_k % 2 == 0]
    wanted = state.get(_WANTED_POSITIONAL) or _value("w_positional") or DEFAULT.positional
    positional = wanted if wanted in kinds else DEFAULT.positional
    if _value("w_positional") != positional:
        _set_widget("w_positional", positional)
    # nhead_kv keeps the learner's choice, as nhead does: E = 17 forces both down, E = 32 gives both back.
    wanted_kv = state.get(_WANTED_KV)
    kv = _kv_heads(nhead, wanted_kv)
    if _value("w_nhead_kv") != kv:
        _set_widget("w_nhead_kv", kv)
    group = sb.expander("Architecture", key=ARCHITECTURE_OPEN, on_change="rerun")
    if group.open:
        _architecture_widgets(group, nhead, d_k, kinds, used)
    else:
        for key in _ARCHITECTURE_KEYS:
            if key in state:  # kept while its widget is not drawn: Streamlit forgets an undrawn widget's value
                _set_widget(key, state[key])
    # A value the sizes force away from the learner's is said below the group, open or not.
    if wanted == "rope" and positional != "rope" and "positional" not in used:
        sb.caption(f"RoPE turns pairs of dimensions, so it needs an even d_k; d_k = E/nhead = {d_k} is odd, so "
                   f"positions are {positional} for now. RoPE comes back when d_k is even.")
    if wanted_kv and wanted_kv != kv and "nhead_kv" not in used:
        sb.caption(f"nhead_kv = {wanted_kv}, as set before, does not divide nhead = {nhead}, so nhead_kv is {kv} for "
                   f"now; it goes back to {wanted_kv} when nhead allows.")
    return group if group.open else None


def _architecture_widgets(group, nhead: int, d_k: int, kinds: list[str], used: dict[str, Any]) -> None:
    """The open Architecture group's own widgets: family, norms, activation, positions, nhead_kv and bias."""
    state = st.session_state
    custom = {"on_change": _mark_custom}
    shown = partial(_widget_args, used=used)
    choice = partial(_widget_args, used=used, arg="index")
    group.radio(LABELS["arch"], format_func=ARCH_NAMES.__getitem__, **custom, **choice("arch", list(ARCHS)),
                help="Encoder-decoder: the paper's two stacks, the decoder reading the encoder through "
                     "cross-attention. Decoder-only: one stack with the causal mask, predicting the next token. "
                     "Encoder-only: one stack that reads every position both ways. A single stack has one sequence, "
                     "of M tokens.")
    group.radio(LABELS["norm_first"], format_func=NORM_FIRST_NAMES.__getitem__, horizontal=True, **custom,
                **choice("norm_first", [False, True]),
                help="Post-norm: x = norm(x + sublayer(x)), as the paper. Pre-norm: x = x + sublayer(norm(x)), with "
                     "one final norm after the last layer.")
    group.radio(LABELS["norm"], format_func=NORM_NAMES.__getitem__, horizontal=True, **custom,
                **choice("norm", list(NORMS)),
                help="RMSNorm divides by the root mean square alone: no mean subtracted, no shift (β).")
    group.radio(LABELS["activation"], format_func=ACTIVATION_NAMES.__getitem__, horizontal=True, **custom,
                **choice("activation", list(ACTIVATIONS)),
                help="SwiGLU gates the FFN: (SiLU(x W1) ⊙ x W3) W2, three matrices of E · d_ff weights each (W1 and "
                     "W3 in, W2 out) where ReLU and GELU have two.")
    positions = choice("positional", list(POSITIONAL_KINDS) if "positional" in used else kinds)
    group.radio(LABELS["positional"], format_func=POSITIONAL_NAMES.__getitem__, horizontal=True,
                on_change=_choose_positional, **positions,
                help="Sinusoidal and learned positions are added to the token embeddings; RoPE rotates each head's "
                     "queries and keys by their positions instead; relative (T5) adds a learned bias per head and "
                     "offset bucket to the scores; none gives the model no positions at all."
                     + ("" if "rope" in kinds else f" RoPE is not offered now: it turns pairs of dimensions, and "
                                                   f"d_k = E/nhead = {d_k} is odd."))
    kv_widget = shown("nhead_kv", divisors(nhead))
    shown_heads = state[_SHOWN + "nhead"] if kv_widget["disabled"] else nhead
    kv_widget["options"] = _options_holding(divisors(shown_heads), _value(kv_widget["key"]))
    shown_kv = _value(kv_widget["key"])
    group.select_slider(LABELS["nhead_kv"], on_change=_choose_nhead_kv,
                        format_func=lambda h: f"{h} ({attention_kind(shown_heads, h)})",
                        **kv_widget | {"disabled": kv_widget["disabled"] or len(kv_widget["options"]) == 1},
                        help="Only divisors of nhead are offered: each K/V head serves nhead / nhead_kv query heads. "
                             "MHA: one K/V head per query head (the paper); GQA: groups share one (Llama-2-70B); "
                             "MQA: one K/V head for all.")
    heads_per_kv = shown_heads // shown_kv
    group.caption(f"nhead_kv = {shown_kv} of nhead = {shown_heads}: {attention_kind(shown_heads, shown_kv)}, "
                  + ("every query head has its own K and V." if heads_per_kv == 1
                     else f"each K/V head serves {heads_per_kv} query heads."))
    group.checkbox(LABELS["bias"], **custom, **shown("bias"),
                   help="The paper's linear layers add a bias, and LayerNorm a shift β; Llama-2 has neither.")


def architecture_words(c: TransformerConfig) -> str:
    """The Architecture group's choices as they run, in one line: said under the group while it is closed."""
    kind = "MLA" if c.attention == "mla" else f"{attention_kind(c.nhead, c.nhead_kv)} (nhead_kv = {c.nhead_kv})"
    parts = [c.arch, "pre-norm" if c.norm_first else "post-norm", NORM_NAMES[c.norm], ACTIVATION_NAMES[c.activation],
             f"{POSITIONAL_NAMES[c.positional]} positions", kind, "biases" if c.bias else "no bias"]
    parts += [part for part in _new_parts(c) if not part.startswith("MLA")]
    return ", ".join(parts)


def _write_url(run: Run, page: str) -> None:
    """Put the sliders' config and the page's own choices in the URL, in one write: each write is a step in
    the browser's history, so a second one would take a Back of its own. The query is replaced
    whole, so another page's choices never ride along (Streamlit also clears them on a page switch).
    The choices are first kept in range of the config that runs (keep_choices_in_range), before the page draws
    its widgets: a text's N = 1 has one batch item, a trained model's E its own dimensions."""
    wanted = link_query(run.cfg, config_values(run.sliders), page, st.session_state, text_link_values(page))
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
