"""Bring one element of the page into view, once, after a button asked for it.

Why: the quiz's second Next sits under an answered question's evidence. When the question it leads
to is answered too (every question of a review is), that one's evidence is as long, and the browser
kept its scroll position: the learner landed at the foot of the new evidence, the question, its box
and Check a screen or two above. Streamlit has no way to scroll the page, so a component does it.

How: a component that takes no room runs in the page's own document. Mounted under a new key for each
request, it runs once: on the next animation frame, after the run's elements are laid out, it scrolls
the element tagged with Streamlit's class for a key (``st-key-<key>``) to the top of the window, just
under Streamlit's header (``stHeader``, a bar drawn over the page), which would cover what was scrolled
to the window's very top.

Only the page scrolls, never a box that clips: the browser's own scrollIntoView scrolls every ancestor
that can be scrolled, and an expander whose content grows animates its height with its box clipped, so
a target scrolled into view inside it slid out of the window again as the box grew. The page is scrolled
to where the target already lies, and the growing box then uncovers it.

One scroll does not suffice while the page still changes (the browser stops a scroll at the page's
current foot), so the request watches the target for WATCH_MS, a frame at a time, and brings it back
wherever it has gone; the learner's own wheel, touch, key or click ends it at once.
"""

from __future__ import annotations

import streamlit as st

from ui.server.streamlit_internals import by_test_id

_JS = """
function pageScroller(element) {
  // The nearest ancestor that scrolls (overflow auto or scroll): the page. One that merely clips
  // (overflow hidden, as an expander is while it animates) is passed over.
  for (let box = element.parentElement; box; box = box.parentElement) {
    const overflow = getComputedStyle(box).overflowY;
    if ((overflow === 'auto' || overflow === 'scroll') && box.scrollHeight > box.clientHeight) return box;
  }
  return document.scrollingElement;
}

function offset(target, page, block) {
  // How far the page must scroll for the target to stand where asked (0: it does).
  const view = page === document.scrollingElement ? { top: 0, bottom: window.innerHeight }
                                                    : page.getBoundingClientRect();
  const header = document.querySelector('%(header)s');
  const top = Math.max(view.top, header ? header.getBoundingClientRect().bottom : 0);  // under the bar
  const box = target.getBoundingClientRect();
  if (block === 'start' || box.top < top || box.height > view.bottom - top) {
    return box.top - top;  // its top just under the header
  }
  // "nearest": only as far as it takes to show it whole, to the last fraction of a pixel
  return Math.max(0, Math.ceil(box.bottom - view.bottom));
}

const WATCH_MS = %(watch)d;
const HANDS = ['wheel', 'touchstart', 'keydown', 'pointerdown'];

export default function (component) {
  const { data } = component;
  const start = performance.now();
  let done = false;
  const stop = () => {
    done = true;
    for (const type of HANDS) window.removeEventListener(type, stop, true);
  };
  for (const type of HANDS) window.addEventListener(type, stop, { capture: true, passive: true });
  function step() {
    if (done) return;
    const target = document.querySelector(`.${CSS.escape(data.target)}`);
    if (target) {
      const page = pageScroller(target);
      const by = offset(target, page, data.block);
      if (Math.abs(by) >= 1) page.scrollBy({ top: by });  // short at the page's foot, perhaps: again next frame
    }
    if (performance.now() - start >= WATCH_MS) stop();
    else requestAnimationFrame(step);
  }
  requestAnimationFrame(step);  // after the run's elements are laid out
}
"""

WATCH_MS = 4000  # how long (ms) a request keeps its target where asked: longer than an expander's opening

_scroll_to = st.components.v2.component("tse_scroll_to", js=_JS % {"watch": WATCH_MS, "header": by_test_id("stHeader")})


def scroll_to(key: str, request: int, block: str = "start") -> None:
    """Scroll the element with widget or container key ``key`` into view, once per ``request`` number (a rerun with
    the same number does not scroll again). ``block`` as scrollIntoView takes it: "start" puts it at the top;
    "nearest" scrolls only as far as it takes to show it whole, so what is just above stays in view."""
    _scroll_to(key=f"scroll_to_{key}_{request}", data={"target": f"st-key-{key}", "block": block}, height=0)
