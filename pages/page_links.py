"""A page's own choices in its link, next to the shared config: which names, and how bad values fall back.

A teacher's link reproduced the sizes but not what the page showed: a lesson on masking could not send
a link that opens on the decoder's masked self-attention. The sidebar (pages.common) reads and writes
the URL once per run, before the page draws, so the choices a page keeps in the link are declared here,
where the sidebar can reach them without running the page: the attention page's map and the quiz's
topic. A link typed by hand is untrusted: a value is read as plain text or a whole number, never
evaluated, and one the page cannot show falls back with a sentence for the link's warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping, MutableMapping, Sequence, TypeVar

from core import TransformerConfig
from core.views import ATTENTION_KINDS
from quizzes import TOPICS


@dataclass(frozen=True)
class Choice:
    """One widget of a page whose value a link carries.

    ``options`` is what the widget offers at a config, ``default`` what it starts on, and ``text`` how a
    value is written in the URL. A choice with ``counts`` is numbered 0, 1, ... (its options a range),
    and ``counts`` names what the numbers count, for a warning ("layers")."""
    name: str
    key: str
    options: Callable[[TransformerConfig], Sequence]
    default: Callable[[TransformerConfig], Any] = lambda cfg: 0
    text: Callable[[Any], str] = str
    counts: str = ""


def _plain(text: Any) -> str:
    """Text as compared, and as a link writes a name: lower case, each run of other characters than
    letters and digits one hyphen ("Decoder masked self_attention" is decoder-masked-self-attention)."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


# Short names for the URL; the widget's own label (in any case, with spaces or hyphens) is read too.
KIND_TEXT = {"encoder self-attention": "encoder-self", "decoder masked self-attention": "decoder-masked",
             "cross-attention": "cross"}
assert set(KIND_TEXT) == set(ATTENTION_KINDS)

ALL_TOPICS = "All topics"  # the quiz's first choice of topic

PAGE_CHOICES: dict[str, tuple[Choice, ...]] = {
    "attention": (
        Choice("kind", "a_kind", lambda cfg: list(ATTENTION_KINDS), lambda cfg: next(iter(ATTENTION_KINDS)),
               KIND_TEXT.__getitem__),
        Choice("layer", "a_layer", lambda cfg: range(cfg.layers), counts="layers"),
        Choice("head", "a_head", lambda cfg: range(cfg.nhead), counts="heads"),
        # The last sequence is the padded one, so its mask shows something.
        Choice("item", "a_item", lambda cfg: range(cfg.N), lambda cfg: cfg.N - 1, counts="batch items"),
    ),
    # topic=masking: a lesson's link opens the quiz on its own topic's questions.
    "quiz": (Choice("topic", "quiz_topic", lambda cfg: [ALL_TOPICS, *TOPICS], lambda cfg: ALL_TOPICS, _plain),),
}


V = TypeVar("V")


def in_any_case(query: Mapping[str, V], exact: Collection[str]) -> dict[str, tuple[str, V]]:
    """A link's names as the app reads them: each name in lower case, without spaces around it, -> the
    name as the link spelt it (for a warning to quote) and its value.

    A link typed by hand, off a slide, has ``?n=4`` or ``KIND=cross``; read in any case, a name still
    counts. Where a link spells one name twice (``E=32&e=64``), the spelling in ``exact`` wins, wherever
    it stands. The sidebar's settings (pages.common.link_params) and a page's own choices are read so."""
    found: dict[str, tuple[str, V]] = {}
    for name, value in sorted(query.items(), key=lambda item: item[0] not in exact):  # exact names first
        found.setdefault(name.strip().lower(), (name, value))
    return found


def read_choice(choice: Choice, raw: Any, cfg: TransformerConfig) -> tuple[Any, str | None]:
    """The value a link's ``raw`` text asks for, or the nearest one the widget offers (a number past
    the end becomes the last) or its default, with a sentence saying so. Never raises."""
    options = choice.options(cfg)
    default = choice.default(cfg)
    shown = " ".join(str(raw)[:40].split())  # as the warning quotes it: a newline would split its list
    if choice.counts:
        try:
            number = int(str(raw).strip())
        except ValueError:
            return default, (f"{choice.name}={shown!r} is not a whole number written in digits; "
                             f"showing {choice.name} {default}.")
        last = len(options) - 1
        if 0 <= number <= last:
            return number, None
        near = min(max(number, 0), last)
        return near, (f"{choice.name}={shown} is not among this config's {len(options)} {choice.counts}, "
                      f"0 to {last}; showing {choice.name} {near}.")
    wanted = _plain(raw)
    for option in options:
        if wanted in (_plain(choice.text(option)), _plain(option)):
            return option, None
    names = ", ".join(choice.text(option) for option in options)
    return default, f"{choice.name}={shown!r} is not one of {names}; showing {choice.text(default)}."


def read_choices(choices: Sequence[Choice], query: dict[str, Any],
                 cfg: TransformerConfig) -> tuple[dict[str, Any], list[str]]:
    """Widget key -> value for each choice the query names (exactly, or in another case), and the
    warnings for those that had to fall back. Choices the query leaves out keep what they have."""
    names = in_any_case(query, [choice.name for choice in choices])
    values: dict[str, Any] = {}
    warnings: list[str] = []
    for choice in choices:
        _, raw = names.get(choice.name.lower(), (None, None))
        if raw is None:
            continue
        values[choice.key], warning = read_choice(choice, raw, cfg)
        if warning:
            warnings.append(warning)
    return values, warnings


def settle(choices: Sequence[Choice], cfg: TransformerConfig, state: MutableMapping[str, Any]) -> None:
    """Give each choice a value the widget offers at ``cfg``: its default on a first visit, and after
    the config shrank under it (fewer layers, heads or sequences than the one chosen)."""
    for choice in choices:
        if choice.key not in state or state[choice.key] not in choice.options(cfg):
            state[choice.key] = choice.default(cfg)


def link_values(choices: Sequence[Choice], state: MutableMapping[str, Any]) -> dict[str, str]:
    """The choices as the URL writes them, after ``settle``."""
    return {choice.name: choice.text(state[choice.key]) for choice in choices}
