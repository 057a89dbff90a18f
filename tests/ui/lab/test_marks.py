"""ui/lab/marks.py: a run this tab had going, named once the browser's report of this session's own read
comes; a report made for another session (what the browser hands a new one on reconnecting) is not taken."""

from streamlit.testing.v1 import AppTest


def lab() -> None:
    import streamlit as st

    from ui.lab.marks import runs_lost

    st.write(repr(runs_lost(st.session_state.get("going", {"reversal": False, "language-model": False}))))


def said(at: AppTest) -> str:
    return at.markdown[0].value


def reported(text: str, seq: int) -> dict:
    return {"found": {"available": True, "text": text, "seq": seq}, "conflict": None}


def test_a_run_marked_in_the_tab_and_missing_here_is_named_once_this_sessions_read_reports():
    from ui.lab.marks import MARK, READ_SEQ

    at = AppTest.from_function(lab).run()
    assert said(at) == "[]"  # the browser has not reported yet
    seq = at.session_state[READ_SEQ]
    at.session_state[MARK] = reported("reversal", seq + 1)  # an old session's read, handed over on reconnecting
    assert said(at.run()) == "[]"
    at.session_state[MARK] = reported("reversal", seq)
    assert said(at.run()) == "['reversal']"
    assert said(at.run()) == "['reversal']"  # it stays said until a run of it starts again
    at.session_state["going"] = {"reversal": True, "language-model": False}
    assert said(at.run()) == "[]"
    at.session_state["going"] = {"reversal": False, "language-model": False}
    assert said(at.run()) == "[]"  # said once per session: the new run ended here, nothing was lost


def test_a_run_this_session_has_is_not_lost():
    from ui.lab.marks import MARK, READ_SEQ

    at = AppTest.from_function(lab)
    at.session_state["going"] = {"reversal": True, "language-model": False}
    at.run()
    at.session_state[MARK] = reported("reversal,language-model", at.session_state[READ_SEQ])
    assert said(at.run()) == "['language-model']"
