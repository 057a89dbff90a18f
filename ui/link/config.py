"""A link's config, read as the sidebar's sliders can show it: names in any case and by the paper's aliases,
values snapped to the sliders' steps, and one sentence for the link's warning per value that had to move.

No Streamlit here: ui/sidebar/config.py puts what this reads into its widgets. A link is untrusted text, read as
whole numbers and words, never evaluated; nothing here raises on it.
"""

from __future__ import annotations

import difflib
import math
from functools import partial
from types import MappingProxyType
from typing import Any, Collection, Mapping

from core import DEFAULT, PRESETS, TransformerConfig, divisors
from core.config import ACTIVATIONS, ARCHS, NORMS, POSITIONAL_KINDS
from render.tables import in_words
from ui.link.choices import Choice, names_any_case, number_text, slug, warning_quote, whole_number
from ui.link.parts import PART_BOOLS, PART_FIELDS, part_link_values, read_parts


# Slider options. Small values one by one, larger ones on a coarse grid that contains every
# preset's value; anything else in a URL snaps to the nearest option with a warning.
_SMALL = list(range(1, 65))
LENGTHS = _SMALL + [96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192]
WIDTHS = _SMALL + [80, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024, 1280, 1536, 2048,
                   2560, 3072, 4096, 5120, 6144, 7168, 8192, 12288]
VOCABS = list(range(2, 65)) + [80, 100, 128, 256, 500, 512, 1000, 1024, 2000, 4096, 8000, 10000,
                               16384, 32000, 32128, 37000, 50257, 65536, 102400, 129280, 151936]
# And the real models' own FFN and expert widths (Llama-2's, Mistral's, DeepSeek's SwiGLU widths).
FFS = sorted(set(WIDTHS) | {4 * w for w in WIDTHS} | {1408, 10944, 11008, 14336, 18432, 28672})
N_RANGE = (1, 64)
LAYER_RANGE = (1, 96)
MAX_NHEAD_OPTION = 128

# The config's fields, in the order a link writes them (a single stack's link has no M_target). A link always
# carries the first sixteen; the parts after them only where they differ from the default (ui/link/parts.py).
SIZE_FIELDS = ("N", "M", "M_target", "E", "nhead", "vocab_size", "layers", "d_ff", "positional",
               "tie_embeddings", "arch", "nhead_kv", "norm_first", "norm", "activation", "bias")
CONFIG_FIELDS = (*SIZE_FIELDS, *PART_FIELDS)
SIZE_BOOLS = ("tie_embeddings", "norm_first", "bias")
BOOL_FIELDS = (*SIZE_BOOLS, *PART_BOOLS)  # written true or false in a link


def nhead_options(E: int) -> list[int]:
    """The nhead values the slider offers for this E: the divisors of E (so d_k is whole)."""
    return [d for d in divisors(E) if d <= MAX_NHEAD_OPTION]


def attention_kind(nhead: int, nhead_kv: int) -> str:
    """MHA (a K/V head per query head), MQA (one K/V head for all) or GQA (groups in between)."""
    return "MHA" if nhead_kv == nhead else "MQA" if nhead_kv == 1 else "GQA"


def link_text(value: Any) -> str:
    """A config value as a link writes it: booleans as true and false, the rest as they print."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def nearest(value: int, options: list[int]) -> int:
    """The option nearest ``value`` on a log scale (the grid is coarse where values are large); 0, an option of
    some parts' grids (no experts, no window), only for a value below 1."""
    if value < 1 and 0 in options:
        return 0
    return min((o for o in options if o > 0), key=lambda o: (abs(math.log(o) - math.log(max(value, 1))), o))


TRUE_WORDS, FALSE_WORDS = ("true", "1", "yes"), ("false", "0", "no", "")  # tie_embeddings= and the like in a link


def _word(text: Any) -> str:
    """A link's word as compared: Decoder_Only, decoder only and decoder-only are one word."""
    return "-".join(str(text).strip().lower().replace("_", " ").split())


def snap_config(values: dict[str, Any]) -> tuple[TransformerConfig, list[str]]:
    """Turn untrusted values (from a URL) into the nearest config the sliders can show.

    Returns the config and one warning per value that had to change. Never raises.
    """
    warnings: list[str] = []
    base = DEFAULT.to_dict()
    out: dict[str, Any] = {}

    def as_int(name: str, using: Any = None) -> int | None:
        raw = values.get(name)
        if raw is None:
            return None
        value = whole_number(raw)
        if value is None:
            warnings.append(f"{name}={warning_quote(raw)!r} is not a whole number written in digits; "
                            f"using {base[name] if using is None else using}.")
        return value

    def choose(name: str, options: list[int] | tuple[int, int], fallback: int, using: Any = None) -> int:
        value = as_int(name, using=using)
        if value is None:
            return fallback
        if isinstance(options, tuple):
            low, high = options
            snapped = min(max(value, low), high)
        else:
            low, high = options[0], options[-1]
            snapped = nearest(value, options)
        if snapped != value and low <= value <= high:  # inside the range, between two of its steps
            warnings.append(f"{name}={value} is not one of the slider's steps; using the nearest, {snapped}.")
        elif snapped != value:
            warnings.append(f"{name}={number_text(value, values[name])} is outside the slider's range, {low} to "
                            f"{high}; using {snapped}.")
        return snapped

    def word(name: str, options: tuple[str, ...], fallback: str) -> str:
        raw = values.get(name)
        if raw is None or not _word(raw):  # positional= with nothing after it: the default, as ever
            return fallback
        if _word(raw) in options:
            return _word(raw)
        warnings.append(f"{name}={warning_quote(raw)!r} is not one of {', '.join(options)}; using {fallback}.")
        return fallback

    def flag(name: str) -> bool:
        raw = values.get(name)
        said = None if raw is None else str(raw).strip().lower()
        if said in TRUE_WORDS or said in FALSE_WORDS:
            return said in TRUE_WORDS
        if said is not None:
            warnings.append(f"{name}={warning_quote(raw)!r} is not true or false; using {link_text(base[name])}.")
        return base[name]

    out["N"] = choose("N", N_RANGE, base["N"])
    out["M"] = choose("M", LENGTHS, base["M"])
    out["arch"] = word("arch", ARCHS, base["arch"])
    if out["arch"] == "encoder-decoder":
        out["M_target"] = choose("M_target", LENGTHS, out["M"])
    else:  # one stack, one sequence: M_target is no setting of it
        out["M_target"] = None
        if values.get("M_target") is not None:
            warnings.append(f"{_quoted(('M_target', str(values['M_target'])))} is the encoder-decoder's target "
                            f"length; arch={out['arch']} has one sequence of M tokens, so it was left out.")
    out["E"] = choose("E", WIDTHS, base["E"])
    out["layers"] = choose("layers", LAYER_RANGE, base["layers"])
    out["vocab_size"] = choose("vocab_size", VOCABS, base["vocab_size"])
    out["d_ff"] = choose("d_ff", FFS, 4 * out["E"])
    heads = nhead_options(out["E"])
    wanted = as_int("nhead")
    if wanted is None:
        out["nhead"] = nearest(min(base["nhead"], out["E"]), heads)
    else:
        out["nhead"] = nearest(wanted, heads) if wanted >= 1 else heads[0]
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
    out["positional"] = word("positional", POSITIONAL_KINDS, base["positional"])
    # Latent attention turns its own rope_head_dim, not d_k (ui/link/parts.py checks again if it is left out).
    mla = _word(values.get("attention", "")) == "mla" and out["arch"] != "encoder-decoder"
    if out["positional"] == "rope" and (out["E"] // out["nhead"]) % 2 and not mla:
        warnings.append(f"positional=rope turns pairs of dimensions, so it needs an even d_k; d_k = E/nhead = "
                        f"{out['E']}/{out['nhead']} = {out['E'] // out['nhead']} is odd, so using sinusoidal.")
        out["positional"] = "sinusoidal"
    out["norm"] = word("norm", NORMS, base["norm"])
    out["activation"] = word("activation", ACTIVATIONS, base["activation"])
    for name in SIZE_BOOLS:  # the parts' own are read with their parts
        out[name] = flag(name)
    kv_options = divisors(out["nhead"])
    kv = as_int("nhead_kv", using=f"nhead_kv = nhead = {out['nhead']}")
    if kv is None:
        out["nhead_kv"] = out["nhead"]
    else:
        out["nhead_kv"] = nearest(kv, kv_options) if kv >= 1 else kv_options[0]
        if kv < 1:
            warnings.append(f"nhead_kv={number_text(kv, values['nhead_kv'])} is not a number of K/V heads (at least "
                            f"1); using nhead_kv={out['nhead_kv']}.")
        elif out["nhead_kv"] != kv:
            warnings.append(f"nhead_kv={number_text(kv, values['nhead_kv'])} does not divide nhead={out['nhead']}; "
                            f"using nhead_kv={out['nhead_kv']} (nhead={out['nhead']} allows "
                            f"{', '.join(map(str, kv_options))}).")
    read_parts(values, out, warnings, lengths=LENGTHS, widths=WIDTHS, ffs=FFS, choose=choose, word=word, flag=flag)
    return TransformerConfig(**out), warnings


def preset_named(text: Any) -> tuple[str | None, str | None]:
    """The preset a link's ``preset=`` names (in any case, with spaces, hyphens or underscores, with or
    without the bracket after its name), or None and a sentence for the link's warning."""
    wanted = slug(text)
    for name in PRESETS:
        if wanted in (slug(name), slug(name.split(" (")[0])):
            return name, None
    names = ", ".join(slug(name.split(" (")[0]) for name in PRESETS)
    return None, f"preset={warning_quote(text)!r} is no preset's name, so it was left out; the presets are {names}."


def preset_values(name: str) -> dict[str, str]:
    """A preset's settings as a link writes them, for a link's own settings to be laid over."""
    return {field: link_text(value) for field, value in config_values(PRESETS[name]).items()}


def config_values(cfg: TransformerConfig) -> dict[str, Any]:
    """The settings a link carries to reproduce ``cfg``: the sizes and the family's parts always (a single
    stack has no M_target), the new parts only where they are not the default."""
    sizes = {name: getattr(cfg, name) for name in SIZE_FIELDS if getattr(cfg, name) is not None}
    return sizes | part_link_values(cfg)


def on_sliders(cfg: TransformerConfig) -> bool:
    """Could the sidebar show ``cfg`` as it is? (snap_config would leave every value as it is; the
    sidebar has no seed, so any seed but the default one is off the sliders.)"""
    return snap_config(cfg.to_dict()) == (cfg, [])


# Other names for a setting that a link typed by hand may use: the paper's and PyTorch's, which the
# sliders' labels show in brackets.
ALIASES = {"d_model": "E", "dim_feedforward": "d_ff"}


def link_params(query: Mapping[str, str | list[str]], own: Collection[str] = (),
                elsewhere: Mapping[str, str] = MappingProxyType({})) -> tuple[dict[str, str], list[str]]:
    """The config's values in a link's query, with a warning for each name that is no setting (left out, with the
    setting it is near) and for each setting given two values (_set_twice). Names are read in any case. ``own``:
    the page's names, passed over; ``elsewhere``: another page's choices -> that page (``mode`` -> ``quiz``). A
    name may come with every value given; the last is read."""
    last = {name: (value[-1] if value else "") if isinstance(value, list) else value for name, value in query.items()}
    own = {name.lower() for name in own}
    given = names_any_case(last, CONFIG_FIELDS)
    by_name = {name.lower(): name for name in CONFIG_FIELDS} | {alias.lower(): f for alias, f in ALIASES.items()}
    values: dict[str, str] = {}
    read_as: dict[str, str] = {}  # setting -> the name, as the link spells it, whose value was read
    warnings: list[str] = []
    gives_settings = any(lowered in by_name for lowered in given)
    for lowered, (name, value) in given.items():
        field = by_name.get(lowered)
        if field is not None:
            if field not in values:  # E before d_model: names_any_case puts the exact names first
                values[field], read_as[field] = value, name
            continue
        if lowered in own:
            continue
        shown = warning_quote(name)
        if lowered in elsewhere and not gives_settings:
            near = difflib.get_close_matches(lowered, by_name, n=1, cutoff=0.8)
            warnings.append(f"{shown}={warning_quote(value)!r} is a choice of the /{elsewhere[lowered]} page's links, "
                            f"not this page's, so it was left out"
                            + (f"; did you mean {by_name[near[0]]}?" if near else "."))
            continue
        # The page's own names are candidates too: on the attention page heads=2 means head, not nhead.
        candidates = by_name | {choice: choice for choice in own}
        close = difflib.get_close_matches(lowered, candidates, n=1, cutoff=0.6)
        if close and candidates[close[0]] in PART_FIELDS and \
                difflib.SequenceMatcher(None, lowered, close[0]).ratio() < 0.8:  # kind= is no near miss of window
            close = difflib.get_close_matches(lowered, [c for c in candidates if candidates[c] not in PART_FIELDS],
                                              n=1, cutoff=0.6)
        # A suggestion only for a setting the link does not give by any of its names (mode= is near d_model).
        near = close and close[0] not in given and candidates[close[0]].lower() not in given
        if lowered in elsewhere and not near:
            continue  # a copied link's choice of another page, beside the settings: known, so read quietly
        warnings.append(f"{shown}={warning_quote(value)!r} names no setting, so it was left out"
                        + (f"; did you mean {candidates[close[0]]}?" if near else "."))
    return values, warnings + _set_twice(query, by_name, read_as, values)


def _set_twice(query: Mapping[str, str | list[str]], by_name: Mapping[str, str], read_as: Mapping[str, str],
               values: Mapping[str, str]) -> list[str]:
    """A sentence for each setting that the link gives two different values, by two of its names
    (``E=32&d_model=64``) or by one name twice (``N=3&N=5``): which value was used and which were left out, so a
    dropped value is never silent. A value given again alike (E=32&d_model=32, or 032) is not mentioned."""
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
        name, _ = names_any_case({n: None for n, _ in pairs}, [choice.name])[choice.name.lower()]
        sentences.append(_twice(choice.name, pairs, (name, str(every[name][-1]))))
    return [sentence for sentence in sentences if sentence]


def _read_alike(field: str, a: str, b: str) -> bool:
    """Whether two of a link's values for ``field`` come to the same, as snap_config reads them: one
    true or false for tie_embeddings and the other switches (true, 1, yes), one word in any case for
    positional and the other parts (Learned, learned), one whole number for the sizes (32, 032, +32)."""
    x, y = a.strip().lower(), b.strip().lower()
    if field in BOOL_FIELDS:
        return x == y or any(x in same and y in same for same in (TRUE_WORDS, FALSE_WORDS))
    if field in WORD_FIELDS:
        return _word(x) == _word(y)
    m, n = whole_number(x), whole_number(y)
    return m == n if m is not None or n is not None else x == y


# Settings a link gives as words, not sizes.
WORD_FIELDS = ("positional", "arch", "norm", "activation", "attention", *BOOL_FIELDS)


def _quoted(pair: tuple[str, str], as_number: bool = True) -> str:
    """A name and its value as a link's warning quotes them: a size as the other warnings quote it
    (number_text: d_model=64, or a long number by its first digits and its length), else in quotes as
    written (positional='learned', tie_embeddings='01')."""
    name, value = pair
    number = whole_number(value) if as_number else None
    return f"{warning_quote(name)}={number_text(number, value) if number is not None else repr(warning_quote(value))}"
