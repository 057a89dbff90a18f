"""Bring one element of the page into view, once, after a button asked for it.

Why: the quiz's second Next sits under an answered question's evidence. When the question it leads
to is answered too (every question of a review is), that one's evidence is as long, and the browser
kept its scroll position: the learner landed at the foot of the new evidence, the question, its box
and Check a screen or two above. Streamlit has no way to scroll the page, so a component does it.

How: a component that takes no room runs in the page's own document. Mounted under a new key for each
request, it runs once: on the next animation frame, after the run's elements are laid out, it scrolls
the element tagged with Streamlit's class for a key (``st-key-<key>``) to the top of the window, just
under Streamlit's header: that bar (``stHeader``, 60 px, white, drawn over the page) covered what was
scrolled to the window's very top, and the quiz's "Progress reset" box, 56 px tall, went wholly under it.
"""

from __future__ import annotations

import streamlit as st

_JS = """
export default function (component) {
  const { data } = component;
  requestAnimationFrame(() => {
    const target = document.querySelector(`.${CSS.escape(data.target)}`);
    if (!target) return;
    const header = document.querySelector('[data-testid="stHeader"]');
    const covered = header ? Math.max(0, header.getBoundingClientRect().bottom) : 0;
    target.style.scrollMarginTop = `${covered}px`;  // scrollIntoView stops that far short of the top
    target.scrollIntoView({ block: data.block });
  });
}
"""

_scroll_to = st.components.v2.component("tse_scroll_to", js=_JS)


def scroll_to(key: str, request: int, block: str = "start") -> None:
    """Scroll the element with widget or container key ``key`` into view; ``request`` numbers the
    requests, so that each mounts anew and scrolls once (a rerun with the same number does not).
    ``block`` is scrollIntoView's: "start" puts it at the top; "nearest" scrolls only as far as it takes
    to show it whole, so that what the learner was looking at, just above it, stays in view."""
    _scroll_to(key=f"scroll_to_{key}_{request}", data={"target": f"st-key-{key}", "block": block}, height=0)
