"""What the browser tests share: a page of its own size, the app's controls found as a learner finds
them (by label, by key), and waits for the app's runs, which a real browser needs and a test's quick
hand would otherwise outrun."""

from __future__ import annotations

import os
import shutil
import time
from contextlib import contextmanager

from playwright.sync_api import expect


@contextmanager
def page_in(browser, width: int, height: int):
    """A page in a fresh browser context (its own session) with a window of that size."""
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        yield context.new_page()
    finally:
        context.close()


LOAD = 90_000  # ms: the first run imports torch and traces; CI machines may be slow


NAV = [  # sidebar link text, url path, an element the page draws once it is done
    ("Explorer", "explorer", '[data-testid="stDataFrame"]'),
    ("Attention", "attention", '[data-testid="stVegaLiteChart"]'),
    ("Positional encoding", "positional", '[data-testid="stVegaLiteChart"]'),
    ("Quiz", "quiz", ".st-key-quiz_io"),  # not the h1: the entry script draws each heading before the page
    ("Training lab", "training_lab", ".st-key-tl_task"),
    ("Decoding", "decoding", '[data-testid="stDataFrame"]'),
    ("Cost", "cost", '[data-testid="stTable"]'),
    ("Compare", "compare", '[data-testid="stTable"]'),
]


def open_architecture(page) -> None:
    """Open the sidebar's Architecture group as a learner does, by its label: its widgets are drawn only then."""
    page.locator(".st-key-sidebar_architecture").get_by_text("Architecture", exact=True).click()


def shape_cell(page, row: int):
    """The 'live shape' cell (column 2) of a row of the explorer's table (0-based row)."""
    return page.locator('[data-testid="stDataFrame"]').first.locator(f'[data-testid="glide-cell-2-{row}"]')


def slider(page, label: str):
    return page.locator('[data-testid="stSlider"]').filter(has_text=label)


def slider_thumb(page, label: str):
    return slider(page, label).get_by_role("slider")


def thumb_value(page, label: str):
    """The number shown above a slider's thumb."""
    return slider(page, label).locator('[data-testid="stSliderThumbValue"]')


def keep(path, tmp_path) -> None:
    """Also copy a screenshot to $SCREENSHOT_DIR when set, to look at it after the run."""
    target = os.environ.get("SCREENSHOT_DIR")
    if target:
        os.makedirs(target, exist_ok=True)
        shutil.copy(path, os.path.join(target, path.name))


def go_to(page, text: str) -> None:
    """Click a page's link in the sidebar."""
    page.locator(".st-key-page_nav").get_by_text(text, exact=True).click()


def idle(page) -> None:
    """Wait until the app's script has finished its run. A run redraws what it changes, and a
    control drawn anew loses the keyboard's focus: a key pressed meanwhile goes nowhere."""
    expect(page.locator('[data-testid="stApp"]')).to_have_attribute("data-test-script-state", "notRunning",
                                                                     timeout=LOAD)


def no_exception(page) -> None:
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def sent_frames(page) -> list[bytes]:
    """Every frame the page sends on its websockets from now on, kept in the list returned. Call it
    before the page opens the app: Playwright reports a websocket from its opening on."""
    frames: list[bytes] = []

    def watch(ws) -> None:
        ws.on("framesent", lambda payload: frames.append(payload if isinstance(payload, bytes) else payload.encode()))

    page.on("websocket", watch)
    return frames


def wait_until_sent(page, frames: list[bytes], text: str) -> None:
    """Wait until the browser has sent the server a frame holding ``text``: a text box's value, which
    Streamlit sends once the box loses focus.

    Waiting for the app to be idle is not enough: the value left the browser after a Back pressed at
    once in 2 of 5 rounds of a loop, and the quiz then stayed where Back had left (one CI run failed
    so; 1 in 5 and 1 in 9 rounds). The request that came after Back's cut its run short, before the
    page read the URL, or Streamlit folded the two into one run without Back's flag. A learner's
    hand is not that quick; a test's is, so it waits here.
    """
    wanted = text.encode()
    for _ in range(LOAD // 50):
        if any(wanted in frame for frame in frames):
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"the browser did not send {text!r} within {LOAD // 1000} s")


def sockets_opened(page) -> list[float]:
    """When (time.monotonic) the page opened each of its app websockets from now on, kept in the list returned:
    a tab whose server went away (a replica restarted) opens a new one once a server answers again."""
    opened: list[float] = []
    page.on("websocket", lambda ws: opened.append(time.monotonic()) if ws.url.endswith("/_stcore/stream") else None)
    return opened


def reconnected(page, opened: list[float], since: int) -> float:
    """Wait until the page has opened a websocket after its ``since``-th (sockets_opened) and Streamlit says it
    is connected; return when that socket opened. A key pressed before then reaches no server."""
    for _ in range(LOAD // 100):
        if len(opened) > since:
            break
        page.wait_for_timeout(100)
    else:
        raise AssertionError(f"the tab opened no new websocket within {LOAD // 1000} s")
    expect(page.locator('[data-testid="stApp"]')).to_have_attribute("data-test-connection-state", "CONNECTED",
                                                                     timeout=LOAD)
    return opened[since]


def open_quiz(page, url: str) -> list[bytes]:
    """Open the quiz at ``url``, wait until its progress store has sent its report, then for the app to
    be idle; returns the frames the page sends (sent_frames).

    The store (pages.browser_store) tells the server what the browser holds once, just after the page
    opens, and its report starts a run. A report that left late carried the widgets' values as they were
    when it was sent: in 1 of 20 rounds of a loop it came just after Back had put the topic back, and set
    the topic Back had undone. A test works on the quiz once it has come."""
    sent = sent_frames(page)
    page.goto(url)
    wait_until_sent(page, sent, '"found":{"available"')
    idle(page)
    return sent


def click_next(page) -> None:
    """Next, once the run in progress has finished: a run that draws a new message above the
    question (a restored answer's welcome, say) shows the old Next and the new one side by side
    until it ends, and a click meanwhile met two buttons."""
    idle(page)
    nxt = page.get_by_role("button", name="Next ▶")
    expect(nxt).to_have_count(1, timeout=LOAD)
    nxt.click()


STORE_KEY = "transformer-shape-explorer/quiz-progress"  # the browser's copy of the quiz's progress


def settled_box(locator, page, changed_from: dict) -> dict:
    """The element's bounding box once it has left ``changed_from`` (its box before a resize or a
    redraw) and stopped changing: two reads 100 ms apart agree, within 10 s. On a busy machine the
    change takes longer than any fixed pause would allow."""
    box = locator.bounding_box()
    for _ in range(100):
        page.wait_for_timeout(100)
        again = locator.bounding_box()
        if again == box != changed_from:
            return box
        box = again
    raise AssertionError(f"no settled change from {changed_from} in 10 s: {box}")


def still_box(locator, page) -> dict:
    """The element's bounding box once it has stopped moving: three reads 150 ms apart agree, within 10 s
    (an element that slides into place, as a toolbar does on hover, is checked where it ends up)."""
    boxes = [locator.bounding_box()]
    for _ in range(66):
        page.wait_for_timeout(150)
        boxes = [*boxes[-2:], locator.bounding_box()]
        if len(boxes) == 3 and boxes[0] == boxes[1] == boxes[2]:
            return boxes[-1]
    raise AssertionError(f"still moving after 10 s: {boxes}")


def chart_scrolls(page, nth: int = 0) -> None:
    """Wait until the page's chart ``nth`` (the first by default) scrolls sideways in its box. Waited for,
    not read once: in a busy CI run the box was read before the chart had its width (scrollWidth equal to
    clientWidth), and a scroll set then went nowhere."""
    page.wait_for_function(f"() => {{ const e = document.querySelectorAll('.vega-embed')[{nth}]; "
                           "return e !== undefined && e.scrollWidth > e.clientWidth; }", timeout=LOAD)


def visible_chart_scrolls(page, nth: int) -> bool:
    """Whether the page's visible chart ``nth`` scrolls sideways in its box, read once it has its width."""
    charts = page.locator(".vega-embed:visible")
    still_box(charts.nth(nth).locator(":scope > .marks"), page)
    return charts.nth(nth).evaluate("e => e.scrollWidth > e.clientWidth")


def expect_whole_charts(charts, count: int) -> None:
    """`count` charts, each drawn and none wider than its box (nothing hidden to the right)."""
    expect(charts).to_have_count(count, timeout=LOAD)
    for i in range(count):
        expect(charts.nth(i).locator(":scope > .marks")).to_be_visible(timeout=LOAD)  # the svg or canvas
        assert charts.nth(i).evaluate("e => e.scrollWidth <= e.clientWidth")


def clear_of_the_header(page, locator) -> None:
    """``locator`` is wholly on screen under Streamlit's header, the 60 px bar drawn over the page's top:
    in the viewport is not enough, as what is scrolled to the window's very top lies under that bar."""
    def gap() -> float:
        return page.evaluate("""e => e.getBoundingClientRect().top - Math.max(0,
            document.querySelector('[data-testid="stHeader"]').getBoundingClientRect().bottom)""",
                             locator.element_handle())
    expect(locator).to_be_in_viewport(ratio=1, timeout=LOAD)
    page.wait_for_timeout(300)  # scroll_to waits for the next animation frame
    assert gap() >= -1, gap()
