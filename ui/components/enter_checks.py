"""Enter in a quiz answer presses that question's Check button; leaving the box only keeps the draft.

Why not st.form, whose Enter submits: inside a form a value reaches the server only on submit, so a draft
left with Next, Previous or another page would be lost (drafts outlast them: persist_state="session"), and
Enter on a chosen radio option does not submit a form. Outside a form Streamlit cannot tell Enter from
leaving the box (both send the value), so the key itself is caught in the page.

How: one listener on the document, in the capture phase (the choices' own handlers stop Enter bubbling).
Enter inside the element keyed ``ans_<id>`` clicks the button keyed ``submit_<id>`` after a zero-delay
timer, so that Streamlit sends the typed value first; never while an input method composes, nor with a
modifier held.
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
