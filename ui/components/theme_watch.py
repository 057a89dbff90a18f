"""Start a run when the browser switches between the light and the dark theme.

Why: a chart's words and a few of its marks are drawn in the theme's ink (render.palette.INK, chosen by
ui.look.theme.theme), and Streamlit tells the server the theme only with a run. Switching the theme
from the app's menu, or the system going dark while the page is open, starts no run, and the charts
would keep the light ink, too faint on the dark page, until the learner next touched a control.

How: a component that takes no room runs in the page's own document. Twice a second it reads the
page's background (Streamlit's ``stApp``) and, when that has turned from light to dark or back since it
last looked, sends a trigger: the run it starts carries the new theme, and every chart is drawn in its
ink. It compares the browser with itself, so a server that cannot tell the theme (st.context.theme is
empty) never sets off a run after run.

The run a switch starts can now and then still draw in the old ink: so each run also tells the watcher
which theme it drew for, and a run that drew for the other theme than the page's gets one more, a few times
at most in a row.
"""

from __future__ import annotations

import streamlit as st

from ui.look.theme import said_theme
from ui.server.streamlit_internals import by_test_id

# Runs each time Python sends new data (every run) and when the theme changes: the previous poll is
# stopped first.
_JS = """
function pageTheme() {
  const app = document.querySelector('%(app)s');
  const rgb = app ? getComputedStyle(app).backgroundColor.match(/[0-9.]+/g) : null;
  if (!rgb) return null;
  const [r, g, b] = rgb.map(Number);
  return 0.299 * r + 0.587 * g + 0.114 * b < 128 ? 'dark' : 'light';
}

const ASKS = 3;  // runs asked for at most while the charts are drawn for the other theme

export default function (component) {
  const { setTriggerValue, data } = component;
  clearInterval(window.__tseThemeWatch);
  // Kept on the window, not in this call: a switch of theme calls this again at once, before a poll
  // could see the switch, and a value of this call's own would start from the new theme.
  window.__tseThemeSeen ??= pageTheme();
  // Called with each run's data: a run that drew for the other theme than the page's gets one more.
  const drawn = data?.drawn ?? null;  // null when the server cannot tell the theme
  const now = pageTheme();
  if (!now || !drawn || now === drawn) {
    window.__tseThemeAsked = 0;
  } else if ((window.__tseThemeAsked ?? 0) < ASKS) {
    window.__tseThemeAsked = (window.__tseThemeAsked ?? 0) + 1;
    window.__tseThemeSeen = now;  // asked for here: the poll need not ask again
    setTriggerValue('changed', now);
  }
  window.__tseThemeWatch = setInterval(() => {
    const now = pageTheme();
    if (now && window.__tseThemeSeen && now !== window.__tseThemeSeen) setTriggerValue('changed', now);
    window.__tseThemeSeen = now ?? window.__tseThemeSeen;
  }, 500);
  return () => clearInterval(window.__tseThemeWatch);
}
"""

_theme_watch = st.components.v2.component("tse_theme_watch", js=_JS % {"app": by_test_id("stApp")})


def watch_theme(key: str = "theme_watch") -> None:
    """Mount the watcher (each run, under one key, so that it stays mounted): a switch of theme in the
    browser starts a run, which draws the charts in the new theme's ink."""
    _theme_watch(key=key, data={"drawn": said_theme()}, on_changed_change=lambda: None, height=0)
