"""The quiz's progress, kept in step with the copy in the learner's browser (ui/components/browser_store.py).

The copy is read once per session and merged with what the session has; every later state of the
progress is handed to the browser to keep; and another tab's save, when the browser refused to write
over it, is merged in and said. Called by pages/quiz.py before it draws anything.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from quizzes.progress import counted, dumps, load_progress, merge
from quizzes.recheck import recheck
from render.markdown import as_literal
from ui.components.browser_store import browser_store, conflict, report
from ui.quiz.state import (BASE, BROWSER_SPOKE, HEARD, MERGED_SEQ, PROGRESS, SEQ, STORE, STORED, context, flash,
                              progress, slider_config)


def take_browser_report() -> None:
    """Restore the progress the browser keeps, once per session, merged with this session's answers (the later
    attempt at each question counts), and note when the browser cannot keep it. After its first report, another
    tab's save is looked for on every run (docs/quiz.md). Runs before anything is drawn, so the top of the page
    shows the result."""
    st.session_state[BROWSER_SPOKE] = False  # set below when this run brings news from the browser
    found = report(STORE)
    if found is not None:
        heard_news(found)
    if st.session_state.get(STORED) is not None:  # reported before; a failed write or another tab is news
        if found is not None and not found["available"] and st.session_state[STORED] is not False:
            st.session_state[STORED] = False
        take_other_tabs()
        return
    if found is None:
        return
    st.session_state[STORED] = found["available"]
    st.session_state[BASE] = found["text"]
    if not found["text"]:
        return
    loaded, message = load_progress(found["text"])
    if loaded is None:
        flash("warning", "The progress this browser kept could not be read, so the quiz starts afresh and the "
                         f"unreadable copy is replaced. {as_literal(message)}")
    elif loaded["answers"] or "reset_at" in loaded:
        # Marked again, as an import is: the copy may have been marked before a checker was fixed, or edited in
        # the browser's storage. An answer that cannot be checked now is kept as it was, not lost.
        with st.spinner("Checking your saved answers against the model…"):
            loaded, rechecked = recheck(loaded, context, slider_config, keep=True)
        fresh = not progress()["answers"]
        st.session_state[PROGRESS] = merge(progress(), loaded)
        if fresh and loaded["answers"]:
            flash("success", " ".join(filter(None, (
                f"Welcome back: {counted(len(loaded['answers']))} restored from this browser.",
                rechecked.restored_summary(), message))))


def heard_news(found: dict[str, Any]) -> None:
    """Mark this run as the browser's (BROWSER_SPOKE) when the store's report is not the one the last run took:
    every new report, so that a re-read after a refused write does not withdraw Reset's question."""
    if found != st.session_state.get(HEARD):
        st.session_state[HEARD] = found
        st.session_state[BROWSER_SPOKE] = True


def take_other_tabs() -> None:
    """Merge what another tab saved since this one last looked, when the browser refused to save
    over it (ui/components/browser_store.py), so both tabs' answers are kept."""
    found = conflict(STORE)
    if found is None or found["seq"] <= st.session_state.get(MERGED_SEQ, -1):
        return
    st.session_state[BROWSER_SPOKE] = True
    st.session_state[MERGED_SEQ] = found["seq"]
    st.session_state[BASE] = found["text"]  # the next save may replace it: it is merged in now
    loaded, _ = load_progress(found["text"])
    if loaded is None:  # emptied ("" is no progress file) or unreadable: this tab's progress is written over it
        return
    mine = progress()
    merged = merge(mine, loaded)
    if (merged["answers"], merged.get("reset_at")) != (mine["answers"], mine.get("reset_at")):
        st.session_state[PROGRESS] = merged
        note = merge_note(mine, merged)
        flash("info", note)
        st.toast(note, icon=":material/sync:")  # seen where the learner is, even far down a topic set


def merge_note(mine: dict, merged: dict) -> str:
    """What another tab's save changed here, in words: the answers it brought, and those its later
    reset (or import) dropped from this tab, so that a wiped score is never a surprise."""
    taken = sum(1 for qid, entry in merged["answers"].items() if mine["answers"].get(qid) is not entry)
    dropped = sum(1 for qid in mine["answers"] if qid not in merged["answers"])
    said = []
    if merged.get("reset_at", 0) > mine.get("reset_at", 0):
        said.append("reset the progress (or imported a file)" + (
            f", which clears the {counted(dropped)} given here before it" if dropped else ""))
    if taken:
        said.append(f"saved {counted(taken)} that {'is' if taken == 1 else 'are'} now counted here too")
    return f"Another quiz tab in this browser {' and '.join(said)}."


def keep_in_browser() -> None:
    """Mount the browser's store: it reads once, then keeps every new state of the progress. Nothing is written
    before the browser has reported what it holds, nor to a browser that cannot keep it (STORED is False). Mounted
    in the sidebar, so the browser reports before the learner can click (docs/quiz.md)."""
    with st.sidebar:
        if st.session_state.get(STORED) is not True:  # not reported yet, or cannot keep it: read only
            browser_store("quiz-progress", key=STORE, save=None)
            return
        seq = st.session_state[SEQ] = st.session_state.get(SEQ, 0) + 1
        text = dumps(progress())
        browser_store("quiz-progress", key=STORE, save=text, base=st.session_state.get(BASE), seq=seq)
        st.session_state[BASE] = text  # unless the browser reports a conflict, this is what it now holds
