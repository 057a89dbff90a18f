"""Enter in a quiz answer presses that question's Check button.

Why: a learner who types ``(N, M, E)`` and presses Enter expects the answer to be checked, as in
any form on the web. Streamlit's text box only takes its value on Enter, so nothing visible
happened and the learner had to reach for the mouse or Tab to Check. Streamlit cannot tell Enter
from leaving the box (both send the value), and checking on leaving would turn every draft left
with Next into a recorded attempt, so the key itself is caught in the page.

How: one listener on the page's document. A keydown of Enter inside a question's answer (the
element Streamlit tags with the class ``st-key-ans_<id>``: its text box, or one of its choices)
clicks the button tagged ``st-key-submit_<id>``. It listens in the capture phase, since the
choices' own handlers stop the key from bubbling up to the document, and clicks only once the
event has been handled (a zero-delay timer): Streamlit's text box sends its value on that same
Enter, so the value goes first and the click's run checks it. Nothing is clicked while an input
method is still composing a character, or with a modifier held.
"""

from __future__ import annotations

import streamlit as st

ANSWER_CLASS = "st-key-ans_"  # Streamlit's class for the widget with key "ans_<id>"
SUBMIT_CLASS = "st-key-submit_"  # and for the Check button, key "submit_<id>"

_JS = """
export default function (component) {
  const { data } = component;
  const answer = data.answer, submit = data.submit;
  const onKey = (event) => {
    if (event.key !== "Enter" || event.isComposing || event.shiftKey || event.ctrlKey || event.altKey
        || event.metaKey || !(event.target instanceof HTMLInputElement)) return;
    const box = event.target.closest(`[class*="${answer}"]`);
    if (!box) return;
    const name = [...box.classList].find((c) => c.startsWith(answer));
    if (!name) return;  // a class that only contains the prefix: not one of Streamlit's keys
    const button = document.querySelector(`.${CSS.escape(submit + name.slice(answer.length))} button`);
    if (!button || button.disabled) return;
    // Once this event's own handlers, Streamlit's among them, have sent the typed value.
    setTimeout(() => button.click(), 0);
  };
  document.addEventListener("keydown", onKey, true);
  return () => document.removeEventListener("keydown", onKey, true);
}
"""

_enter_checks = st.components.v2.component("tse_enter_checks", js=_JS)


def enter_checks(key: str = "quiz_enter_checks") -> None:
    """Mount the listener (once per page run; it takes no room on the page)."""
    _enter_checks(key=key, data={"answer": ANSWER_CLASS, "submit": SUBMIT_CLASS}, height=0)
