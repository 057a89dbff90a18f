"""A config as the app's link writes it: every field under its config name, booleans as true and false, and
no M_target for a single stack. The AppTest and browser tests open a family by such a link."""

from __future__ import annotations

from urllib.parse import urlencode

from core import TransformerConfig
from ui.config_link import CONFIG_FIELDS, link_text


def config_link(cfg: TransformerConfig) -> dict[str, str]:
    """The query that reproduces ``cfg`` in the sidebar."""
    return {name: link_text(getattr(cfg, name)) for name in CONFIG_FIELDS if getattr(cfg, name) is not None}


def config_query(cfg: TransformerConfig) -> str:
    """The same, as the text after a URL's ``?``."""
    return urlencode(config_link(cfg))
