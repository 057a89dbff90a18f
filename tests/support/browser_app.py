"""What the browser tests read from the app's own modules (its theme palette, a chart's plot height),
and WCAG's contrast ratio.

The one place the browser tests import the app's rendering modules from.
"""

from __future__ import annotations

import re

from render.palette import INK
from ui.look.css import CODE_INK, PRIMARY_WORDS, theme_css
from tests.support.contrast import contrast, luminance

__all__ = ["CODE_INK", "INK", "PRIMARY_WORDS", "theme_css", "plot_height", "luminance", "contrast", "hex_rgb",
           "css_hex"]


def plot_height(chart: str, learned: bool = False) -> int:
    """The plot height the app's builder asks for: "memory" (the Explorer's memory against M, with a
    learned table's longer legend when ``learned``) or "curves" (the Positional page's)."""
    from render.charts import _curves_template
    from render.tables import _memory_template

    if chart == "memory":
        return _memory_template(INK["light"]["label"], learned, ("left",))["height"]
    return _curves_template()["height"]


def hex_rgb(colour: str) -> tuple[int, int, int]:
    """A #rrggbb colour as its (red, green, blue) bytes."""
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def css_hex(css: str) -> str:
    """A colour as getComputedStyle gives it, "rgb(35, 38, 47)", as #rrggbb (the alpha, if any, dropped)."""
    return "#" + "".join(f"{int(c):02x}" for c in re.findall(r"\d+", css)[:3])
