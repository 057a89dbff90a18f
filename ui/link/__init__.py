"""The link: what a URL's query asks for, and the query that reproduces a run. The sidebar's only door to links.

No Streamlit here. ``read_link`` turns an untrusted query into the config the sliders can show, the page's own
choices and one warning per name or value it could not use as written; ``link_query`` writes a config and a
page's choices back. The detail lives in ui/link/config.py (the config's settings) and ui/link/choices.py (each
page's own choices).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, MutableMapping

from core import DEFAULT, TransformerConfig
from ui.link.choices import PAGE_CHOICES, keep_choices_in_range, link_values, names_any_case, read_choices, whole_number
from ui.link.config import choices_twice, link_params, link_text, preset_named, preset_values, snap_config

TEXT_NAMES = ("text", "tokens", "target")  # the learner's text's part of a link (ui/sections/your_text.py)
TEXT_PAGES = ("", "explorer", "attention")  # the pages that draw the text box (url_path; "" is the default page)


@dataclass(frozen=True)
class LinkRead:
    """What a link asked for, as the sidebar and the page can show it."""

    cfg: TransformerConfig  # the default's where the link gives no setting
    gives_settings: bool  # whether the link names any setting of the config (or a preset)
    asked_nhead: int | None = None  # the heads asked for, before E snapped them to a divisor
    warnings: list[str] = field(default_factory=list)  # about the config's settings and names left out
    view: dict[str, Any] = field(default_factory=dict)  # widget key -> the page's own choice
    view_warnings: list[str] = field(default_factory=list)  # about the page's own choices, for that page only


def read_link(page: str, every: Mapping[str, list[str]], state: Mapping[str, Any]) -> LinkRead:
    """Read a link's query (name -> every value given, as st.query_params.get_all has them) for ``page``
    (its url_path). ``?preset=llama-2-70b`` starts from that preset; the link's own settings lie over it."""
    choices = PAGE_CHOICES.get(page, ())
    query = {name: values[-1] for name, values in every.items()}  # the last of each, as st.query_params reads it
    elsewhere = {choice.name.lower(): other for other, theirs in PAGE_CHOICES.items() if other != page
                 for choice in theirs}
    own = [choice.name for choice in choices] + ["preset"]
    if page in TEXT_PAGES:
        own += list(TEXT_NAMES)
    else:
        elsewhere |= {name: "explorer" for name in TEXT_NAMES}
    params, warnings = link_params(every, own=own, elsewhere=elsewhere)
    preset_name = names_any_case(query, ["preset"]).get("preset", (None, None))[1]
    if preset_name is not None:
        preset, problem = preset_named(preset_name)
        warnings += [problem] if problem else []
        params = (preset_values(preset) if preset else {}) | params
    cfg, snapped = snap_config(params)
    # A link without nhead asks for the default's heads, as snap_config reads it.
    asked = whole_number(params["nhead"]) if "nhead" in params else DEFAULT.nhead
    view, view_warnings = read_choices(choices, query, cfg, state)
    return LinkRead(cfg, bool(params), asked if asked is not None and asked >= 1 else None, warnings + snapped, view,
                    choices_twice(choices, every) + view_warnings)


def link_query(cfg: TransformerConfig, values: Mapping[str, Any], page: str, state: MutableMapping[str, Any],
               text: Mapping[str, str]) -> dict[str, str]:
    """The query that reproduces a run: the sliders' ``values``, the page's own choices (first kept in range of
    ``cfg``, the config that runs, in ``state``, before the page draws them) and the learner's ``text`` part."""
    choices = PAGE_CHOICES.get(page, ())
    keep_choices_in_range(choices, cfg, state)
    return ({name: link_text(value) for name, value in values.items() if value is not None}
            | link_values(choices, cfg, state) | dict(text))
