"""The shared sidebar: the sliders that set the config every page reads, and the URL that reproduces it.

Data flows one way: widgets -> TransformerConfig (kept in st.session_state, so every page checks
against the same model). A link's values are read into the widgets before they are drawn (snapped to
the nearest option, with a warning when they move), and the config is written back into the link
after, so that a link always reproduces what the page shows.
"""

from __future__ import annotations

import difflib
import math
from functools import partial
from types import MappingProxyType
from typing import Any, Collection, Mapping

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core import DEFAULT, PRESETS, TransformerConfig, divisors
from core.config import SIZE_NAMES
from render.markdown import as_literal
from render.tables import in_words
from ui.page_links import (PAGE_CHOICES, Choice, in_any_case, link_values, number_text, one_line, read_choices,
                              settle, whole_number)


# Slider options. Small values one by one, larger ones on a coarse grid that contains every
# preset's value; anything else in a URL snaps to the nearest option with a warning.
_SMALL = list(range(1, 65))
LENGTHS = _SMALL + [96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]
WIDTHS = _SMALL + [80, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024, 1280, 1536, 2048,
                   2560, 3072, 4096, 5120, 6144, 8192, 12288]
VOCABS = list(range(2, 65)) + [80, 100, 128, 256, 500, 512, 1000, 1024, 2000, 4096, 8000, 10000,
                               16384, 32000, 37000, 50257, 65536]
FFS = sorted(set(WIDTHS) | {4 * w for w in WIDTHS} | {28672})
N_RANGE = (1, 64)
LAYER_RANGE = (1, 96)
MAX_NHEAD_OPTION = 128

# Widget key -> (config field, label). Labels carry the learner's symbol; tests find sliders by it.
LABELS = {
    **SIZE_NAMES,
    "layers": "layers — encoder and decoder layers, each",
    "d_ff": "d_ff — FFN hidden width (dim_feedforward)",
    "positional": "positional encoding",
    "tie_embeddings": "tie_embeddings — one matrix for both embeddings and the output layer",
}
CONFIG_FIELDS = ("N", "M", "M_target", "E", "nhead", "vocab_size", "layers", "d_ff", "positional",
                 "tie_embeddings")
CUSTOM = "(custom)"
STATE_KEY = "cfg"
_WIDGET = "w_"  # widget keys are "w_N", "w_E", ...


def nhead_options(E: int) -> list[int]:
    """The nhead values the slider offers for this E: the divisors of E (so d_k is whole)."""
    return [d for d in divisors(E) if d <= MAX_NHEAD_OPTION]


def _nearest(value: int, options: list[int]) -> int:
    return min(options, key=lambda o: (abs(math.log(o) - math.log(max(value, 1))), o))


TRUE_WORDS, FALSE_WORDS = ("true", "1", "yes"), ("false", "0", "no", "")  # tie_embeddings= in a link


def snap_config(values: dict[str, Any]) -> tuple[TransformerConfig, list[str]]:
    """Turn untrusted values (from a URL) into the nearest config the sliders can show.

    Returns the config and one warning per value that had to change. Never raises.
    """
    warnings: list[str] = []
    base = DEFAULT.to_dict()
    out: dict[str, Any] = {}

    def as_int(name: str) -> int | None:
        raw = values.get(name)
        if raw is None:
            return None
        value = whole_number(raw)
        if value is None:
            warnings.append(f"{name}={one_line(raw)!r} is not a whole number written in digits; "
                            f"using {base[name]}.")
        return value

    def choose(name: str, options: list[int] | tuple[int, int], fallback: int) -> int:
        value = as_int(name)
        if value is None:
            return fallback
        if isinstance(options, tuple):
            low, high = options
            snapped = min(max(value, low), high)
        else:
            low, high = options[0], options[-1]
            snapped = _nearest(value, options) if value >= 1 else options[0]
        if snapped != value and low <= value <= high:  # inside the range, between two of its steps
            warnings.append(f"{name}={value} is not one of the slider's steps; using the nearest, {snapped}.")
        elif snapped != value:
            warnings.append(f"{name}={number_text(value, values[name])} is outside the slider's range, {low} to "
                            f"{high}; using {snapped}.")
        return snapped

    out["N"] = choose("N", N_RANGE, base["N"])
    out["M"] = choose("M", LENGTHS, base["M"])
    out["M_target"] = choose("M_target", LENGTHS, out["M"])
    out["E"] = choose("E", WIDTHS, base["E"])
    out["layers"] = choose("layers", LAYER_RANGE, base["layers"])
    out["vocab_size"] = choose("vocab_size", VOCABS, base["vocab_size"])
    out["d_ff"] = choose("d_ff", FFS, 4 * out["E"])
    heads = nhead_options(out["E"])
    wanted = as_int("nhead")
    if wanted is None:
        out["nhead"] = _nearest(min(base["nhead"], out["E"]), heads)
    else:
        out["nhead"] = _nearest(wanted, heads) if wanted >= 1 else heads[0]
        allowed = f"(E allows {', '.join(map(str, heads))})"
        asked = number_text(wanted, values["nhead"])
        if out["nhead"] == wanted:
            pass
        elif wanted < 1:
            warnings.append(f"nhead={asked} is not a number of heads (at least 1); using nhead={out['nhead']} "
                            f"{allowed}.")
        elif out["E"] % wanted == 0:  # a divisor, above what the slider offers
            warnings.append(f"nhead={asked} divides E={out['E']}, but the slider stops at {MAX_NHEAD_OPTION} "
                            f"heads; using nhead={out['nhead']} {allowed}.")
        else:
            warnings.append(f"nhead={asked} does not divide E={out['E']}; using nhead={out['nhead']} {allowed}.")
    positional = values.get("positional")
    kind = None if positional is None else str(positional).strip().lower()  # Learned = learned, as for true/false
    if kind is None or kind in ("sinusoidal", "learned"):
        out["positional"] = kind or base["positional"]
    else:
        warnings.append(f"positional={one_line(positional)!r} is not 'sinusoidal' or 'learned'; using sinusoidal.")
        out["positional"] = "sinusoidal"
    tie = values.get("tie_embeddings")
    if tie is None or str(tie).strip().lower() in FALSE_WORDS:
        out["tie_embeddings"] = False
    elif str(tie).strip().lower() in TRUE_WORDS:
        out["tie_embeddings"] = True
    else:
        warnings.append(f"tie_embeddings={one_line(tie)!r} is not true or false; using false.")
        out["tie_embeddings"] = False
    return TransformerConfig(**out), warnings


def on_sliders(cfg: TransformerConfig) -> bool:
    """Could the sidebar show ``cfg`` as it is? (snap_config would leave every value as it is; the
    sidebar has no seed, so any seed but the default one is off the sliders.)"""
    return snap_config(cfg.to_dict()) == (cfg, [])


_SET_BY_CODE = "widgets_set_by_code"
_WANTED_NHEAD = "nhead_wanted"  # the heads the learner last chose (slider, link or preset)


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
        _set_widget(_WIDGET + name, getattr(cfg, name))
    # The heads the learner wants stay wanted while this config's nhead is what E snaps them to: a link
    # with E=17&nhead=4 (one head), or Back to E = 17, then E = 20 gives 4 heads, not the 1 snapped to.
    # The session's wanted heads come first: Back's entry has the snapped nhead = 1 in its link.
    heads = nhead_options(cfg.E)
    st.session_state[_WANTED_NHEAD] = next(
        (n for n in (st.session_state.get(_WANTED_NHEAD), asked_nhead) if n and _nearest(n, heads) == cfg.nhead),
        cfg.nhead)
    # What M_target and d_ff follow from here (_follow): this config's M and E, even when the learner's
    # next move comes before the run that would record them (a preset, then at once a slider).
    st.session_state[_FOLLOWED] = {"M": cfg.M, "E": cfg.E}


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


_FOLLOWED = "followed_sources"  # M and E as the sidebar last had them, for _follow


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


def _history_navigation() -> bool:
    """True when the browser's Back or Forward button started this run.

    Every config the sidebar writes to the URL is a new entry in the browser's history, so Back
    is the learner's undo. Streamlit tells the run why it started (its script-run context has the
    flag; Streamlit is pinned in requirements.txt and tests/browser checks Back in a real browser).
    """
    return bool(getattr(get_script_run_ctx(), "is_history_navigation", False))


def _matching_preset(cfg: TransformerConfig) -> str:
    """The preset whose sliders all equal this config's, or CUSTOM."""
    for name, preset in PRESETS.items():
        if all(getattr(preset, f) == getattr(cfg, f) for f in CONFIG_FIELDS):
            return name
    return CUSTOM


# Other names for a setting that a link typed by hand may use: the paper's and PyTorch's, which the
# sliders' labels show in brackets.
ALIASES = {"d_model": "E", "dim_feedforward": "d_ff"}


def link_params(query: Mapping[str, str | list[str]], own: Collection[str] = (),
                elsewhere: Mapping[str, str] = MappingProxyType({})) -> tuple[dict[str, str], list[str]]:
    """The config's values in a link's query, and a warning for each name that looks like a setting
    but is none (``nheads``, ``vocab``), which is left out, and for each setting the link gives two
    different values (see _set_twice).

    A link typed by hand, say off a slide, often has ``?n=4&m=16`` or a near miss: those were
    dropped without a word, and the class saw the default sizes. Names are read in any case (the
    exact one wins: ui.page_links.in_any_case, which a page's own choices share), with the aliases
    above. A name like no setting at all (``utm_source``, which a platform adds to a shared link) is
    passed over in silence, and so are the page's ``own`` names (the attention page's ``layer`` is no
    near miss of layers there), and a near miss whose setting the link also gives: a copied attention
    link with ``layers=2&layer=1`` names both on purpose.

    ``elsewhere`` maps another page's choices to that page (``mode`` to ``quiz``). In a link that gives
    no setting, such a name is said to belong to its page: ``?mode=one`` on the explorer had asked "did
    you mean E?" (by d_model). A setting it is very near is still offered (``layer``, the attention
    page's, for layers). In a link that gives settings, it is read as any other name: a copied link
    (its path edited to another page) gives the setting it is near, and stays quiet.

    A name the link gives more than once (``?N=3&N=5``) may come as the list of its values, as
    st.query_params.get_all has them; its last value is read, as st.query_params.get reads it."""
    last = {name: (value[-1] if value else "") if isinstance(value, list) else value for name, value in query.items()}
    own = {name.lower() for name in own}
    given = in_any_case(last, CONFIG_FIELDS)
    by_name = {name.lower(): name for name in CONFIG_FIELDS} | {alias.lower(): f for alias, f in ALIASES.items()}
    values: dict[str, str] = {}
    read_as: dict[str, str] = {}  # setting -> the name, as the link spells it, whose value was read
    warnings: list[str] = []
    gives_settings = any(lowered in by_name for lowered in given)
    for lowered, (name, value) in given.items():
        field = by_name.get(lowered)
        if field is not None:
            if field not in values:  # E before d_model: in_any_case puts the exact names first
                values[field], read_as[field] = value, name
            continue
        if lowered in own:
            continue
        shown = one_line(name)
        if lowered in elsewhere and not gives_settings:
            near = difflib.get_close_matches(lowered, by_name, n=1, cutoff=0.8)
            warnings.append(f"{shown}={one_line(value)!r} is a choice of the /{elsewhere[lowered]} page's links, "
                            f"not this page's, so it was left out"
                            + (f"; did you mean {by_name[near[0]]}?" if near else "."))
            continue
        # The page's own names are candidates too: on the attention page heads=2 means head, not nhead.
        candidates = by_name | {choice: choice for choice in own}
        close = difflib.get_close_matches(lowered, candidates, n=1, cutoff=0.6)
        # Named too, by any of its names: the quiz's mode= is near d_model, but its link gives E.
        if close and close[0] not in given and candidates[close[0]].lower() not in given:
            warnings.append(f"{shown}={one_line(value)!r} names no setting, so it was left out; "
                            f"did you mean {candidates[close[0]]}?")
    return values, warnings + _set_twice(query, by_name, read_as, values)


def _set_twice(query: Mapping[str, str | list[str]], by_name: Mapping[str, str], read_as: Mapping[str, str],
               values: Mapping[str, str]) -> list[str]:
    """A sentence for each setting that the link gives two different values: by two of its names
    (``E=32&d_model=64``, ``N=4&n=8``) or by one name twice (``N=3&N=5``). It says which value was
    used and which were left out.

    Only one value can be used (which one, link_params decides), and the others were dropped without
    a word: a teacher who wrote d_model=64 under an old E=32 saw E = 32 and no reason why. A value
    given again alike (E=32&d_model=32, or 032) changes nothing, so it is not mentioned; a link the
    app writes names each setting once, so it is never mentioned there."""
    written: dict[str, list[tuple[str, str]]] = {}  # setting -> (name as spelt, value), in the link's order
    for name, value in query.items():
        field = by_name.get(name.strip().lower())
        if field is not None:
            each = value if isinstance(value, list) else [value]
            written.setdefault(field, []).extend((name, str(v)) for v in each)
    sentences = [_twice(field, pairs, (read_as[field], str(values[field]))) for field, pairs in written.items()]
    return [sentence for sentence in sentences if sentence]


def _twice(field: str, pairs: list[tuple[str, str]], used: tuple[str, str]) -> str:
    """The sentence for one setting or page choice that a link gives ``pairs`` of (name as spelt, value),
    of which ``used`` was read: which was used and which left out, or "" when they all read alike."""
    left_out = [pair for pair in dict.fromkeys(pairs) if not _read_alike(field, pair[1], used[1])]
    if not left_out:
        return ""
    quoted = partial(_quoted, as_number=field not in WORD_FIELDS)
    listed = [quoted(pair) for pair in dict.fromkeys(pairs) if pair == used or pair in left_out]
    return (f"{in_words(listed)} {'both' if len(listed) == 2 else 'all'} set {field}; {quoted(used)} was used"
            f"{', ' if len(left_out) > 1 else ' and '}{in_words(map(quoted, left_out))} left out.")


def choices_twice(choices: Collection[Choice], every: Mapping[str, list[str]]) -> list[str]:
    """A sentence for each of a page's own choices that a link gives two different values
    (``tab=curves&tab=compare``, ``kind=cross&KIND=encoder``), as _set_twice says it of the settings.
    The one read is the one read_choices reads: the choice's own spelling first, then the last value."""
    sentences = []
    for choice in choices:
        pairs = [(name, str(value)) for name, values in every.items() if name.strip().lower() == choice.name.lower()
                 for value in values]
        if len(pairs) < 2:
            continue
        name, _ = in_any_case({n: None for n, _ in pairs}, [choice.name])[choice.name.lower()]
        sentences.append(_twice(choice.name, pairs, (name, str(every[name][-1]))))
    return [sentence for sentence in sentences if sentence]


def _read_alike(field: str, a: str, b: str) -> bool:
    """Whether two of a link's values for ``field`` come to the same, as snap_config reads them: one
    true or false for tie_embeddings (true, 1, yes), one word in any case for positional (Learned,
    learned), one whole number for the sizes (32, 032, +32)."""
    x, y = a.strip().lower(), b.strip().lower()
    if field == "tie_embeddings":  # one of WORD_FIELDS
        return x == y or any(x in same and y in same for same in (TRUE_WORDS, FALSE_WORDS))
    m, n = whole_number(x), whole_number(y)
    return m == n if field != "positional" and (m is not None or n is not None) else x == y


WORD_FIELDS = ("positional", "tie_embeddings")  # settings a link gives as words, not sizes


def _quoted(pair: tuple[str, str], as_number: bool = True) -> str:
    """A name and its value as a link's warning quotes them: a size as the other warnings quote it
    (number_text: d_model=64, or a long number by its first digits and its length), else in quotes as
    written (positional='learned', tie_embeddings='01')."""
    name, value = pair
    number = whole_number(value) if as_number else None
    return f"{one_line(name)}={number_text(number, value) if number is not None else repr(one_line(value))}"


def _read_url(page: str) -> None:
    """Take the config, and the page's own choices, from the URL on a session's first run and after
    Back or Forward.

    Any other run keeps the sidebar's own values: the URL follows them, not the other way round.
    Values that had to change are listed in a warning at the top of the page (link_warning); those
    about the page's choices are kept for that page only, so another page never shows them.
    """
    first = "url_read" not in st.session_state
    if not first and not _history_navigation():
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
    """The preset box's help: every preset's sizes, which its name, short enough to read whole in the
    box, leaves out (so does the list, whose lines are no wider than the box)."""
    sizes = [f"- **{name}**: N={c.N}, M={c.M}, E={c.E}, nhead={c.nhead}, {c.layers}+{c.layers} layers, vocab "
             f"{c.vocab_size:,}" + ("" if c.d_ff == 4 * c.E else f", d_ff={c.d_ff}")
             + ("" if c.positional == "sinusoidal" else f", {c.positional} positions")
             + (", tied" if c.tie_embeddings else "") for name, c in PRESETS.items()]
    # One line each: the tooltip is as tall as a 768 px window allows, and cut the last presets off there.
    return ("Start from a named configuration; every slider stays movable. Each preset's sizes, with d_ff = 4E "
            "and sinusoidal positions unless said; *tied*: one matrix for both embeddings and the output layer:\n\n"
            + "\n".join(sizes))


def sidebar_config(page: str = "") -> TransformerConfig:
    """Render the shared sidebar and return the config it describes (also kept in session state).

    The entry script calls it on every run, so every page sees the same config; nhead only offers
    divisors of E, so no slider position can make an invalid config. ``page`` is the url_path of the
    page about to run: its own choices (ui.page_links) go into the URL beside the config.
    """
    st.session_state[_SETTLED] = None  # the callbacks of the message that started this run are done
    _read_url(page)
    sb = st.sidebar
    sb.header("Model sizes")
    sb.selectbox("Preset", [CUSTOM, *PRESETS], key="w_preset", on_change=_apply_preset,
                 help=_preset_help())
    custom = {"on_change": _mark_custom}
    sb.slider(LABELS["N"], *N_RANGE, key="w_N", **custom, **_current("w_N"))
    sb.select_slider(LABELS["M"], LENGTHS, key="w_M", on_change=_follow, args=("M", "M_target", lambda m: m),
                     **_current("w_M"))
    sb.select_slider(LABELS["M_target"], LENGTHS, key="w_M_target", **custom, **_current("w_M_target"),
                     help="Moves with M while the two are equal; set it apart to see the decoder's own length.")
    sb.select_slider(LABELS["E"], WIDTHS, key="w_E", on_change=_follow, args=("E", "d_ff", lambda e: 4 * e),
                     **_current("w_E"))
    heads = nhead_options(st.session_state["w_E"])
    # nhead is the divisor of E nearest the heads the learner chose, not the last one snapped to: stepping
    # E from 16 to 20 with nhead = 4 passed the prime 17, snapped to 1 there and stayed at 1.
    nhead = _nearest(st.session_state.get(_WANTED_NHEAD) or st.session_state.get("w_nhead") or 1, heads)
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
    sb.slider(LABELS["layers"], *LAYER_RANGE, key="w_layers", **custom, **_current("w_layers"))
    sb.select_slider(LABELS["d_ff"], FFS, key="w_d_ff", **custom, **_current("w_d_ff"),
                     help="Moves with E while it is 4E, the paper's choice; set it apart and it stays put.")
    kinds = ["sinusoidal", "learned"]
    sb.radio(LABELS["positional"], kinds, key="w_positional", horizontal=True, **custom,
             **_current("w_positional", "index", kinds))
    sb.checkbox(LABELS["tie_embeddings"], key="w_tie_embeddings", **custom, **_current("w_tie_embeddings"),
                help="The paper shares one vocab_size × E matrix between both embeddings and the final linear layer.")
    st.session_state[_SET_BY_CODE] = set()
    values = {name: st.session_state[_WIDGET + name] for name in CONFIG_FIELDS}
    try:
        cfg = TransformerConfig(**values)
    except ValueError as exc:  # cannot happen through the sliders; kept as a visible safety net
        sb.error(str(exc))
        cfg = DEFAULT
    st.session_state[STATE_KEY] = cfg
    st.session_state[_FOLLOWED] = {"M": cfg.M, "E": cfg.E}
    st.session_state[_SEEN] = {key: st.session_state[key] for key in _sidebar_keys()}
    _write_url(cfg, values, PAGE_CHOICES.get(page, ()))
    view_page, view_warnings = st.session_state.get("view_warnings", ("", []))
    link_warning(st.session_state.get("url_warnings", []) + (view_warnings if view_page == page else []))
    return cfg


def _write_url(cfg: TransformerConfig, values: dict[str, Any], choices: tuple[Choice, ...]) -> None:
    """Put the config and the page's own choices in the URL, in one write: each write is a step in
    the browser's history, so a second one would take a Back of its own. The query is replaced
    whole, so another page's choices never ride along (Streamlit also clears them on a page switch).
    The choices are first kept in range here (settle), before the page draws its widgets."""
    settle(choices, cfg, st.session_state)
    wanted = {k: str(v) for k, v in values.items()} | link_values(choices, cfg, st.session_state)
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
