"""Let the keyboard scroll what scrolls sideways: a map or a code box wider than its box.

Why: a heatmap wider than the column (on a phone, or at 400 % zoom on a laptop, WCAG's reflow case)
scrolls sideways in its own box, and so does a long line of code. A mouse, a touchpad or a finger
can scroll it; the keyboard cannot unless the box takes the focus, or the last keys and
the colour scale are out of a keyboard user's reach (axe-core's rule scrollable-region-focusable).

How: a component that takes no room runs in the page's own document. It gives every such box that
does scroll ``tabindex="0"``, so Tab reaches it and the arrow keys scroll it, and takes it away from a
box that no longer scrolls (a wider window), so that a box with nothing to scroll adds no stop. It
looks again whenever the page changes (a run redraws) or the window is resized. Nothing is sent back
to Python.
"""

from __future__ import annotations

import streamlit as st

from ui.server.streamlit_internals import by_test_id

# The boxes that scroll sideways: a chart's (pages' CSS in streamlit_app.py gives it overflow-x: auto) and
# a code box's <pre>.
_JS = """
const BOXES = '.vega-embed, %(code)s pre';

function mark() {
  for (const box of document.querySelectorAll(BOXES)) {
    const scrolls = box.scrollWidth > box.clientWidth + 1;
    if (scrolls && !box.hasAttribute('tabindex')) {
      box.setAttribute('tabindex', '0');
      box.dataset.tseScrollKeys = '1';
    } else if (!scrolls && box.dataset.tseScrollKeys) {
      box.removeAttribute('tabindex');
      delete box.dataset.tseScrollKeys;
    }
  }
}

export default function () {
  // One observer for the page, kept on the window: this runs again on every run of the script.
  if (!window.__tseScrollKeys) {
    let queued = false;
    const soon = () => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => { queued = false; mark(); });
    };
    window.__tseScrollKeys = new MutationObserver(soon);
    // New nodes (a run's redraw) and new sizes (a chart drawn on a canvas resizes it in place).
    window.__tseScrollKeys.observe(document.body, { childList: true, subtree: true, attributes: true,
                                                    attributeFilter: ['width', 'style'] });
    window.addEventListener('resize', soon);
  }
  mark();
}
"""

# Where the focus is, when the keyboard put it on such a box: an outline in the text's colour, which reads on
# either theme's page.
_FOCUS_CSS = ("<style>[data-tse-scroll-keys]:focus-visible { outline: 2px solid currentColor; outline-offset: 2px; }"
              "</style>")

_scroll_keys = st.components.v2.component("tse_scroll_keys", js=_JS % {"code": by_test_id("stCode")})


def scroll_keys(key: str = "scroll_keys") -> None:
    """Mount the marker (each run, under one key, so that it stays mounted), with the outline it asks for."""
    st.html(_FOCUS_CSS)
    _scroll_keys(key=key, height=0)
