"""A small text kept in the learner's own browser (its localStorage), for work that should outlive
the session.

Why: Streamlit's session state lives in the server process and dies with the tab or with a server
restart, so a learner who came back the next day found their quiz score gone. The browser keeps
the copy; the server stores nothing on disk and nothing is shared between browsers.

The exchange is one-way at a time, so a fresh page can never write over what it has not read yet:
- ``save=None``: the browser reads what it holds under the name and reports it once, as
  ``{"available": bool, "text": str}`` (``text`` is "" when nothing is stored; ``available`` is
  False when the browser blocks storage, as some private modes do);
- ``save="..."``: the browser stores that text under the name, and reports again only if it
  could not. With ``base``, the text the caller last knew to be stored, it first checks that
  nothing else has written since (another tab of the same site shares the storage): if
  something has, it stores nothing and reports ``{"text": what is stored, "seq": seq}`` as
  ``conflict`` instead, for the caller to merge and save again.
Callers pass ``save=None`` until the first report arrives (``report``), and their text from then
on. A read's ``seq`` comes back in its report (``report_for``), and ``area="session"`` keeps the
text in the tab's sessionStorage, for that tab alone, instead of the site's localStorage.

What comes back was written by a browser, so it is untrusted input: ``report`` checks its shape,
and callers parse the text as they would an upload.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

PREFIX = "transformer-shape-explorer/"  # localStorage is per site; the prefix names this app's keys

# Runs in the page each time Python sends new data. Storage calls can throw (blocked storage, a full
# quota), and a throw must not leave Python waiting, so every path ends in a report or a write.
_JS = """
export default function (component) {
  const { data, setStateValue } = component;
  if (!data || typeof data.name !== "string") return;
  let store;
  try {
    store = data.area === "session" ? window.sessionStorage : window.localStorage;
  } catch (error) {
    setStateValue("found", { available: false, text: "", seq: data.seq });
    return;
  }
  if (typeof data.save === "string") {
    try {
      const current = store.getItem(data.name) ?? "";
      if (typeof data.base === "string" && current !== data.base && current !== data.save) {
        setStateValue("conflict", { text: current, seq: data.seq });
        return;
      }
      store.setItem(data.name, data.save);
    } catch (error) {
      setStateValue("found", { available: false, text: "", seq: data.seq });
    }
    return;
  }
  let found;
  try {
    found = { available: true, text: store.getItem(data.name) ?? "", seq: data.seq };
  } catch (error) {
    found = { available: false, text: "", seq: data.seq };
  }
  setStateValue("found", found);
}
"""

_store = st.components.v2.component("tse_browser_store", js=_JS)


def browser_store(name: str, key: str, save: str | None, base: str | None = None, seq: int = 0,
                  area: str = "local") -> None:
    """Mount the store for ``name`` under the widget key ``key`` (``save`` and ``base``: see the module docstring;
    ``seq`` numbers the save, as a read is numbered for report_for). ``area`` "session" keeps the text in this
    tab's sessionStorage alone. The element takes no room on the page; read what the browser said with ``report``
    and ``conflict``."""
    _store(key=key, data={"name": PREFIX + name, "save": save, "base": base, "seq": seq, "area": area},
           default={"found": None, "conflict": None}, on_found_change=lambda: None,
           on_conflict_change=lambda: None, height=0)


def report(key: str) -> dict[str, Any] | None:
    """The browser's latest report for the store mounted under ``key``: ``{"available": bool, "text": str}``, or
    None while it has not reported in this session. Readable anywhere in a run, so a page reads it at the top and
    the run the report starts already draws what it changed, with no extra st.rerun() to race the learner's clicks."""
    state = st.session_state.get(key)
    found = state.get("found") if isinstance(state, Mapping) else None
    if not isinstance(found, Mapping):
        return None
    text = found.get("text")
    return {"available": found.get("available") is True, "text": text if isinstance(text, str) else ""}


def report_for(key: str, seq: int) -> dict[str, Any] | None:
    """The browser's report of the read numbered ``seq``, or None while that read has not reported. The number
    tells this session's read apart from the store's last state, which a tab that reconnects to another server
    hands the new session with an old session's report."""
    state = st.session_state.get(key)
    found = state.get("found") if isinstance(state, Mapping) else None
    if not isinstance(found, Mapping) or found.get("seq") != seq:
        return None
    return report(key)


def conflict(key: str) -> dict[str, Any] | None:
    """The browser's latest refusal to save over another tab's text: ``{"text": str, "seq": int}``
    (the seq of the save it refused), or None if it has never refused one in this session."""
    state = st.session_state.get(key)
    found = state.get("conflict") if isinstance(state, Mapping) else None
    if not isinstance(found, Mapping) or not isinstance(found.get("text"), str):
        return None
    seq = found.get("seq")
    return {"text": found["text"], "seq": seq if isinstance(seq, int) and not isinstance(seq, bool) else -1}
