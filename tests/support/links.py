"""A config as the app's link writes it: every field under its config name, booleans as true and false, no
M_target for a single stack, and the new parts only where they are not the default. The AppTest and browser
tests open a family by such a link."""

from __future__ import annotations

from urllib.parse import urlencode

from core import TransformerConfig
from ui.link.config import config_values, link_text


def config_link(cfg: TransformerConfig) -> dict[str, str]:
    """The query that reproduces ``cfg`` in the sidebar."""
    return {name: link_text(value) for name, value in config_values(cfg).items()}


def config_query(cfg: TransformerConfig) -> str:
    """The same, as the text after a URL's ``?``."""
    return urlencode(config_link(cfg))
