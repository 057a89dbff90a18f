"""Tell the server when the learner closes an expander.

Why: the quiz asks before Reset progress forgets every answer, inside the expander that holds Reset.
Streamlit draws an expander's contents whether it is open or not, and an expander that does not
track its state (on_change) opens and closes in the browser alone, so a question left pending when
the learner closes it would still be there, waiting for a "Yes", when they open it again. Tracking the
state is no help there: it makes the label part of the expander's identity, and that expander's
label names the shuffle seed, so each new seed would make a new expander and take the keyboard's
focus out of the seed's box.

How: a component that takes no room runs in the page's own document, mounted only while something
waits on the expander. It listens for the ``toggle`` event of the ``<details>`` inside the element
Streamlit tags with the expander's key (``st-key-<key>``) and, when it closes, sends a trigger: its
callback runs before the page, as a button's does. ``toggle`` does not bubble, so the listener sits
on the document in the capture phase, which every event passes through on its way down.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  const onToggle = (event) => {
    const box = event.target;
    if (!(box instanceof HTMLDetailsElement) || box.open) return;
    if (box.closest(`.${CSS.escape(data.target)}`)) setTriggerValue("closed", true);
  };
  document.addEventListener("toggle", onToggle, true);
  return () => document.removeEventListener("toggle", onToggle, true);
}
"""

_expander_closed = st.components.v2.component("tse_expander_closed", js=_JS)


def on_expander_closed(expander_key: str, callback: Callable[[], None], *, key: str) -> None:
    """Call ``callback`` (before the next run of the page) when the learner closes the expander keyed
    ``expander_key``. Mounted under ``key``; it listens only while it is mounted, in a run."""
    _expander_closed(key=key, data={"target": f"st-key-{expander_key}"}, on_closed_change=callback, height=0)
