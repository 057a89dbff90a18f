"""The training runs this tab has going, noted in the tab's own storage, so that a run lost with its
server is named on the page instead of silently gone.

Why: a run lives on a thread of the server process that holds the learner's session. When that process
ends (a replica of a class's deployment dies, or the server restarts), Streamlit's page reconnects to a
new session on a live one: the sliders and the link come back as they were, but the run and its progress
are gone, and the page would show a Train button as if nothing had been asked. The tab's sessionStorage
(ui/components/browser_store.py) keeps which experiments had a run going; a new session that finds one
named there, with no run of its own, says that it stopped and that Train starts it again.
"""

from __future__ import annotations

import secrets

import streamlit as st

from ui.components.browser_store import browser_store, report_for

MARK = "tl_run_mark"  # the store's widget key
READ_SEQ = "tl_run_mark_seq"  # this session's number for its one read of the mark
HEARD = "tl_run_mark_heard"  # the browser has reported the mark in this session: save from now on
LOST = "tl_runs_lost"  # the experiments whose runs the page says were lost, until each is trained again


def runs_lost(running: dict[str, bool]) -> list[str]:
    """The experiments (keys of ``running``, which says whether this session has a run of each) whose run
    this tab had going in an earlier session, as the browser has reported them; [] until it has.

    Read once per session, when the browser's report arrives; an experiment leaves the list once this
    session has a run of it again."""
    if HEARD not in st.session_state:
        seq = st.session_state.setdefault(READ_SEQ, secrets.randbits(31))
        found = report_for(MARK, seq)
        if found is None:
            return []
        st.session_state[HEARD] = True
        marked = found["text"].split(",")
        st.session_state[LOST] = [name for name in running if name in marked and not running[name]]
    lost = [name for name in st.session_state.get(LOST, []) if not running.get(name)]
    st.session_state[LOST] = lost
    return lost


def mark_runs(running: dict[str, bool]) -> None:
    """Mount the tab's mark: a read until the browser has reported it in this session, then the names
    of the experiments with a run going, saved on every run of the page."""
    if HEARD not in st.session_state:
        seq = st.session_state.setdefault(READ_SEQ, secrets.randbits(31))
        browser_store("lab-runs", key=MARK, save=None, seq=seq, area="session")
        return
    browser_store("lab-runs", key=MARK, save=",".join(name for name, going in running.items() if going),
                  area="session")
