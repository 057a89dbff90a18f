"""The Quiz page in a real browser: links open it on a topic or a question and Back undoes Next, it
answers by keyboard alone (Enter in an answer checks it) and reads its verdict out, its first question
shows without a scroll, its evidence reads whole on a laptop and a phone, progress outlasts the tab and
two tabs, Reset asks first and brings its answer into view, and a progress file shows as written."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from core import DEFAULT, TransformerConfig
from quizzes import QUESTIONS, questions_for

from tests.support.browser import (
    LOAD, STORE_KEY, clear_of_the_header, click_next, expect_whole_charts, go_to, idle, no_exception, open_quiz, page_in,
    still_box, wait_until_sent,
)
from tests.support.links import config_query

pytestmark = pytest.mark.browser
ASKED = len(questions_for(None, DEFAULT))  # the questions about the default model, the paper's
IN_ALL = len(QUESTIONS)


def pick_q1_right_by_keyboard(page) -> None:
    """On a fresh quiz, pick Q1's right answer, its second choice, with the keyboard alone: into the
    choices, then down one. Focus stays on the choice, once the run the pick started has ended."""
    choices = page.get_by_role("radiogroup", name="Your answer to Q1").get_by_role("radio")
    idle(page)
    choices.first.focus()
    page.keyboard.press("ArrowDown")
    expect(choices.nth(1)).to_be_checked()
    idle(page)


def ask_to_reset(page):
    """Press Reset progress (its expander open) and wait for the page's question; its Yes button."""
    page.get_by_role("button", name="Reset progress").click()
    yes = page.get_by_role("button", name="Yes, forget my answers")
    expect(yes).to_be_visible(timeout=LOAD)
    idle(page)
    return yes


def answer_q1_right(page, app_url: str) -> None:
    """A fresh quiz with Q1 answered right, by the keyboard alone, its evidence on the page."""
    open_quiz(page, app_url + "/quiz")
    expect(page.get_by_text(f"Question 1 of {ASKED}")).to_be_visible(timeout=LOAD)
    pick_q1_right_by_keyboard(page)
    page.keyboard.press("Enter")
    expect_q1_right(page)


def expect_q1_right(page) -> None:
    """Q1 was checked and right, and said so aloud: a right answer by a box of the page's own, as
    st.success is not an alert. It is the only answer so far."""
    expect(page.get_by_role("alert")).to_have_text("Q1: right. The explanation and the live evidence follow.",
                                                   timeout=LOAD)
    score = re.compile(rf"^Score: 1 right, 0 wrong, {ASKED - 1} not tried")
    expect(page.get_by_text(score)).to_be_visible(timeout=LOAD)


def test_a_link_opens_the_quiz_on_a_topic_and_back_returns_to_it(app_url, page):
    """?topic=masking opens the quiz on the masking questions; another topic is a history step, which Back undoes."""
    open_quiz(page, app_url + "/quiz?topic=masking")
    topic = page.locator('[data-testid="stSelectbox"]').filter(has_text="Topic")
    expect(page.get_by_text("Question 1 of 7")).to_be_visible(timeout=LOAD)  # the 7 masking questions
    expect(topic.get_by_role("combobox")).to_have_value("Masking")
    expect(page).to_have_url(re.compile(r"/quiz\?N=2&.*&topic=masking&seed=0&mode=one&q=1$"))
    idle(page)
    topic.click()
    page.get_by_role("option", name="Shapes").click()
    expect(page).to_have_url(re.compile(r"[?&]topic=shapes&seed=0&mode=one&q=1$"), timeout=LOAD)
    expect(topic.get_by_role("combobox")).to_have_value("Shapes")
    page.go_back()
    expect(topic.get_by_role("combobox")).to_have_value("Masking", timeout=LOAD)
    expect(page.get_by_text("Question 1 of 7")).to_be_visible(timeout=LOAD)
    no_exception(page)


def test_a_link_opens_the_quiz_on_a_question_and_back_undoes_next(app_url, page):
    """?topic=masking&q=3 opens the quiz on the question it shows as Q3 of masking; Next is a history step,
    which Back undoes, and a draft typed on the way is still there."""
    sent = open_quiz(page, app_url + "/quiz?topic=masking&q=3")
    expect(page.get_by_text("Question 3 of 7")).to_be_visible(timeout=LOAD)
    expect(page.get_by_role("heading", name="Q3 · Masking")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]topic=masking&seed=0&mode=one&q=3$"))
    click_next(page)  # Q4, a question with a choice
    expect(page.get_by_text("Question 4 of 7")).to_be_visible(timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]q=4$"), timeout=LOAD)
    click_next(page)  # Q5, a shape typed in a box
    answer = page.locator('[data-testid="stTextInput"]').filter(has_text="Your answer").locator("input")
    expect(answer).to_be_visible(timeout=LOAD)
    idle(page)  # Next's run has drawn the box and ended: nothing will draw it again under the typing
    answer.fill("a draft")
    answer.press("Tab")  # Streamlit takes a text input's value when it loses focus
    wait_until_sent(page, sent, "a draft")
    page.go_back()
    expect(page.get_by_text("Question 4 of 7")).to_be_visible(timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]q=4$"))
    page.go_forward()
    expect(page.get_by_text("Question 5 of 7")).to_be_visible(timeout=LOAD)
    expect(answer).to_have_value("a draft", timeout=LOAD)
    no_exception(page)


def test_quiz_progress_outlasts_the_tab_in_the_same_browser(app_url, page):
    """A learner answers, closes the tab and comes back in a new one (a new session, as after a
    server restart): the score is restored from the browser's own storage. Reset empties that copy
    too."""
    stored = ("() => Object.keys(JSON.parse(localStorage.getItem('transformer-shape-explorer/quiz-progress')"
              " || '{}').answers || {}).length")  # how many answers the browser keeps
    open_quiz(page, app_url + "/quiz")
    expect(page.get_by_text(f"Question 1 of {ASKED}")).to_be_visible(timeout=LOAD)
    # By keyboard alone: into the choices, down to the right one, Tab to Check, Enter.
    pick_q1_right_by_keyboard(page)
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Check")).to_be_focused()
    page.keyboard.press("Enter")
    expect_q1_right(page)
    score = page.get_by_text(re.compile(r"^Score:")).inner_text()
    page.wait_for_function(f"({stored})() === 1", timeout=LOAD)
    page.close()

    again = page.context.new_page()
    again.goto(app_url + "/quiz")
    expect(again.get_by_text("Welcome back: 1 answer restored from this browser.")).to_be_visible(timeout=LOAD)
    expect(again.get_by_text(re.compile(r"^Score:"))).to_have_text(score)
    # By keyboard too: the question Reset progress asks comes next in the page, not after every question.
    # Reset waits in an expander under the question, opened by keyboard as well.
    idle(again)
    again.locator(".st-key-quiz_more summary").focus()
    again.keyboard.press("Enter")
    expect(again.get_by_role("button", name="Reset progress")).to_be_visible(timeout=LOAD)
    again.get_by_role("button", name="Reset progress").focus()
    again.keyboard.press("Enter")
    expect(again.get_by_role("button", name="Yes, forget my answers")).to_be_visible(timeout=LOAD)
    idle(again)
    again.keyboard.press("Tab")
    expect(again.get_by_role("button", name="Yes, forget my answers")).to_be_focused()
    again.keyboard.press("Enter")
    # Until the run ends, the question just answered (a warning, an alert too) may still be drawn.
    said = "Progress reset, here and in the copy this browser keeps."
    expect(again.get_by_role("alert").filter(has_text=said)).to_have_text(said, timeout=LOAD)
    idle(again)
    expect(again.get_by_role("alert").filter(has_text="Forget every answer")).to_have_count(0)
    expect(again.get_by_text(re.compile(rf"^Score: 0 right, 0 wrong, {ASKED} not tried"))).to_be_visible(timeout=LOAD)
    again.wait_for_function(f"({stored})() === 0", timeout=LOAD)
    no_exception(again)


def test_closing_the_expander_withdraws_resets_question_and_keeps_every_answer(app_url, page):
    """Reset progress asks first, inside its expander. Closed while it asked, the expander kept the question,
    and its Yes was there again when the learner opened it. The browser now tells the page that it closed
    (pages.expander_closed), by keyboard here, and the page withdraws the question: every answer stays."""
    import json

    from quizzes.progress import FORMAT

    doc = {"format": FORMAT, "version": 1, "answers": {"shape-probs": {"correct": False, "given": "?",
                                                                        "expected": "x"}}}
    page.add_init_script(f"localStorage.setItem({json.dumps(STORE_KEY)}, {json.dumps(json.dumps(doc))})")
    open_quiz(page, app_url + "/quiz")
    expect(page.get_by_text("Welcome back: 1 answer restored from this browser.")).to_be_visible(timeout=LOAD)
    idle(page)
    summary = page.locator(".st-key-quiz_more summary")
    summary.click()
    yes = ask_to_reset(page)
    summary.focus()
    page.keyboard.press("Enter")  # closes it
    # Drawn whether the expander is open or not, the question leaves the page once the run it started ends.
    expect(page.get_by_text("Forget every answer", exact=False)).to_have_count(0, timeout=LOAD)
    idle(page)
    summary.click()  # open again: Reset, and no question
    expect(page.get_by_role("button", name="Reset progress")).to_be_visible(timeout=LOAD)
    expect(yes).to_have_count(0)
    expect(page.get_by_text(re.compile(rf"^Score: 0 right, 1 wrong, {ASKED - 1} not tried"))).to_be_visible()
    stored = f"Object.keys(JSON.parse(localStorage.getItem({json.dumps(STORE_KEY)})).answers).length"
    assert page.evaluate(stored) == 1
    no_exception(page)


def test_exporting_as_resets_question_advises_leaves_the_question_waiting(app_url, browser):
    """Reset's question says "Export them first to keep a copy". Opening "Save or restore progress" started a
    run, and so did the press of Export (its download done): either withdrew the question, so the learner who
    did as told found no Yes to press. Both leave it waiting now; an import still answers it no."""
    with page_in(browser, 1280, 800) as page:
        answer_q1_right(page, app_url)
        page.locator(".st-key-quiz_more summary").click()
        yes = ask_to_reset(page)
        page.locator(".st-key-quiz_io summary").click()  # where the question sends the learner
        export = page.get_by_role("button", name="Export progress (JSON)")
        expect(export).to_be_visible(timeout=LOAD)
        page.wait_for_timeout(500)  # the run the opening starts
        idle(page)
        expect(yes).to_have_count(1)
        with page.expect_download() as download:
            export.click()
        assert '"rnn-recurrence"' in open(download.value.path()).read()  # Q1's answer is in the copy
        page.wait_for_timeout(500)
        idle(page)
        expect(yes).to_have_count(1)
        yes.click()
        score = re.compile(rf"^Score: 0 right, 0 wrong, {ASKED} not tried")
        expect(page.get_by_text(score)).to_be_visible(timeout=LOAD)
        no_exception(page)


def test_a_reset_at_the_foot_of_a_phone_brings_its_message_into_view(app_url, browser):
    """Reset progress waits under the question, its answer ("Progress reset") at the top of the page: on
    a phone the learner pressed Yes and saw nothing happen. The run after the reset scrolls it into view,
    clear of Streamlit's header (the page first scrolled it under that bar, the box wholly hidden)."""
    with page_in(browser, 390, 844) as page:
        answer_q1_right(page, app_url)
        summary = page.locator(".st-key-quiz_more summary")
        summary.scroll_into_view_if_needed()
        summary.click()
        yes = ask_to_reset(page)
        yes.scroll_into_view_if_needed()
        said = "Progress reset, here and in the copy this browser keeps."
        expect(page.get_by_text(f"Question 1 of {ASKED}")).not_to_be_in_viewport()  # the page is at its foot
        yes.click()
        # The info box itself: the words read out for a screen reader (an alert) are clipped out of sight.
        shown = page.locator(".st-key-quiz_messages [data-testid='stMarkdownContainer']").filter(has_text=said)
        expect(shown).to_be_in_viewport(timeout=LOAD)
        idle(page)
        clear_of_the_header(page, page.locator(".st-key-quiz_messages [data-testid='stAlert']").filter(has_text=said))
        no_exception(page)


def test_enter_in_an_answer_checks_it_and_leaving_the_box_does_not(app_url, page):
    """Enter in a typed answer, or on a chosen choice, checks it, as Enter does in a form on the web;
    leaving the box with Tab only keeps the draft, so a draft left with Next is not an attempt."""
    open_quiz(page, app_url + "/quiz")
    expect(page.get_by_text(f"Question 1 of {ASKED}")).to_be_visible(timeout=LOAD)
    pick_q1_right_by_keyboard(page)
    page.keyboard.press("Enter")  # on the chosen choice itself
    expect_q1_right(page)

    click_next(page)
    expect(page.get_by_text(f"Question 2 of {ASKED}")).to_be_visible(timeout=LOAD)
    box = page.get_by_label("Your answer to Q2")  # a GRU's sequential steps over M = 8 tokens
    idle(page)
    box.fill("7")
    box.press("Tab")
    idle(page)
    expect(page.get_by_text(re.compile(rf"^Score: 1 right, 0 wrong, {ASKED - 1} not tried"))).to_be_visible()
    expect(page.get_by_text("Not quite. You answered")).to_have_count(0)
    box.fill("M")
    box.press("Enter")
    two_right = re.compile(rf"^Score: 2 right, 0 wrong, {ASKED - 2} not tried")
    expect(page.get_by_text(two_right)).to_be_visible(timeout=LOAD)
    expect(page.get_by_text("Right. You answered M")).to_be_visible()
    expect(box).to_have_value("M")
    no_exception(page)


def test_next_under_an_answers_evidence_brings_the_next_question_into_view_on_a_phone(app_url, browser):
    """On a 390 px phone the evidence under a checked answer is two screens long, and the only Next sat
    above the question: every question ended in a long swipe back up. The Next under the evidence
    leaves the new question, its box and its Check in view."""
    with page_in(browser, 390, 844) as page:
        answer_q1_right(page, app_url)
        below = page.get_by_role("button", name="Next question ▶")
        below.scroll_into_view_if_needed()
        expect(page.get_by_role("button", name="Next ▶")).not_to_be_in_viewport()  # the one above is far up
        idle(page)
        below.click()
        expect(page.get_by_text(f"Question 2 of {ASKED}")).to_be_visible(timeout=LOAD)
        idle(page)
        expect(page.get_by_label("Your answer to Q2")).to_be_in_viewport()
        expect(page.get_by_role("button", name="Check")).to_be_in_viewport()
        no_exception(page)


def test_next_under_the_evidence_scrolls_up_to_an_answered_next_question(app_url, browser):
    """When the next question is answered too, as every question of a review is, its evidence is as long,
    and the page stayed at its foot: the new question, its box and Check a screen or two above. The
    lower Next now scrolls the new question's row of Previous and Next to the top (pages.scroll_to)."""
    with page_in(browser, 390, 844) as page:
        answer_q1_right(page, app_url)
        click_next(page)
        expect(page.get_by_text(f"Question 2 of {ASKED}")).to_be_visible(timeout=LOAD)
        idle(page)
        page.get_by_label("Your answer to Q2").fill("12345")
        page.keyboard.press("Enter")  # checks it: wrong, and Q2 shows its evidence too
        expect(page.get_by_text(re.compile(r"^Score: 1 right, 1 wrong"))).to_be_visible(timeout=LOAD)
        idle(page)
        page.locator(".st-key-quiz_prev button").click()
        expect(page.get_by_text(f"Question 1 of {ASKED}")).to_be_visible(timeout=LOAD)
        idle(page)
        below = page.get_by_role("button", name="Next question ▶")
        below.scroll_into_view_if_needed()
        expect(page.get_by_text(f"Question 1 of {ASKED}")).not_to_be_in_viewport()  # deep in Q1's evidence
        below.click()
        expect(page.get_by_text(f"Question 2 of {ASKED}")).to_be_in_viewport(timeout=LOAD)
        idle(page)
        clear_of_the_header(page, page.locator(".st-key-quiz_prev button"))  # the row scrolled to, not under the bar
        expect(page.get_by_label("Your answer to Q2")).to_be_in_viewport()
        no_exception(page)


def assert_reads_whole(table, width: int) -> None:
    """An st.table whose every cell's text lies inside its cell, every cell inside a screen ``width`` px
    wide, and whose box has nothing to scroll to sideways."""
    overflowing = table.evaluate(
        "(t, width) => [...t.querySelectorAll('th, td')].filter(c => { const b = c.getBoundingClientRect();"
        " const p = c.querySelector('p') || c; return c.scrollWidth > c.clientWidth || p.scrollWidth >"
        " p.clientWidth || b.left < 0 || b.right > width; }).map(c => c.innerText)", width)
    assert overflowing == []
    assert table.evaluate("t => t.querySelector('table').parentElement.scrollWidth"
                          " <= t.querySelector('table').parentElement.clientWidth")


@pytest.mark.parametrize("width,height,touch", [(1280, 800, False), (390, 844, True)])
def test_the_evidences_names_and_values_read_whole_on_a_laptop_and_a_phone(app_url, browser, width, height,
                                                                            touch):
    """In st.dataframe's grid the learned table's error message, the evidence for this answer, ended in
    "longer than the learned po…" at 1280 px, and on a 390 px phone the long names pushed the value column
    past the screen's edge. The values are an HTML table now: a header over each column, and every name and
    value wraps inside its cell and inside the screen, as written (no Markdown, no escaping's backslashes)."""
    from core import DEFAULT
    from quizzes.experiments import learned_positions

    error = learned_positions(DEFAULT).values["learned_error"]
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=touch, is_mobile=touch)
    try:
        page = context.new_page()
        open_quiz(page, app_url + "/quiz?topic=positional-encoding&q=4")
        page.get_by_role("radiogroup", name="Your prediction to Q4").get_by_role(
            "radio", name=re.compile("^It raises an error")).check(force=True)
        idle(page)
        page.get_by_role("button", name="Commit my prediction and run").click()
        expect(page.get_by_text("Right. You answered “It raises an error: ")).to_be_visible(timeout=LOAD)
        idle(page)
        table = page.locator('[data-testid="stTable"]').filter(has_text="learned table's answer for max_len + 1")
        expect(table.get_by_role("columnheader")).to_have_text(["measured", "value"])
        cell = table.get_by_role("cell", name=error, exact=True)
        cell.scroll_into_view_if_needed()
        expect(cell).to_be_in_viewport(ratio=1)
        expect(table.get_by_role("cell", name="max_len — rows of a learned table", exact=True)).to_be_visible()
        assert_reads_whole(table, width)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        no_exception(page)
    finally:
        context.close()


@pytest.mark.parametrize("width,height,touch", [(1280, 800, False), (390, 844, True), (360, 740, True)])
def test_the_evidences_records_read_whole_on_a_laptop_and_a_phone(app_url, browser, width, height, touch):
    """In st.dataframe's grid the pass's table was 570 px of columns in a 390 px phone's 324 px box: "live
    shape" and "formula", the evidence itself, began off-screen. The records are HTML tables now: at the
    largest sliders (the longest shapes) every cell wraps inside its cell and the screen, the asked row is
    marked in words and shaded with every row in view, and the 64 shift-right steps scroll in a box of their
    own, never sideways, under headers a screen reader reads. On a 360 px phone the pass's table needed 309 px
    of its 294 and scrolled sideways, "vocab_size)" cut at the edge, until its type went to 13 px there
    (render.evidence.RECORD_PHONE_CSS); a laptop's stays as it was."""
    import json

    from quizzes.progress import FORMAT

    doc = {"format": FORMAT, "version": 1, "answers": {
        qid: {"correct": False, "given": "?", "expected": "x"} for qid in ("shape-probs", "shift-labels")}}
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=touch, is_mobile=touch)
    try:
        page = context.new_page()
        page.add_init_script(f"localStorage.setItem({json.dumps(STORE_KEY)}, {json.dumps(json.dumps(doc))})")
        open_quiz(page, app_url + "/quiz?mode=set&N=64&M=4096&E=12288")
        expect(page.get_by_text("Welcome back: 2 answers restored from this browser.")).to_be_visible(timeout=LOAD)
        idle(page)
        tables = page.locator('[data-testid="stTable"]')
        passes = tables.filter(has=page.get_by_role("columnheader", name="tensor", exact=True))
        steps = tables.filter(has=page.get_by_role("columnheader", name="decoder input", exact=True))
        expect(passes).to_have_count(1, timeout=LOAD)
        expect(passes.get_by_role("columnheader")).to_have_text(["your question", "#", "tensor", "live shape",
                                                                 "formula"])
        expect(steps.get_by_role("columnheader")).to_have_text(["position", "decoder input", "label"])
        row = passes.get_by_role("row").filter(has=page.get_by_role("cell", name="▶ asked", exact=True))
        expect(row.get_by_role("cell")).to_have_text(["▶ asked", "14", "output probabilities", "(64, 4096, 100)",
                                                      "(N, M_target, vocab_size)"])
        formula = row.get_by_role("cell", name="(N, M_target, vocab_size)", exact=True)
        formula.scroll_into_view_if_needed()
        expect(formula).to_be_in_viewport(ratio=1)
        assert row.evaluate("r => getComputedStyle(r.querySelector('td')).backgroundColor") == "rgba(255, 196, 0, 0.25)"
        for table in (passes, steps):
            assert_reads_whole(table, width)
        cell = "t => { const s = getComputedStyle(t.querySelector('td')); return [s.fontSize, s.padding]; }"
        assert passes.evaluate(cell) == (["13px", "4px 2px"] if width < 380 else ["14px", "4px 3px"])
        box = "t => { const b = t.querySelector('table').parentElement; return [b.scrollHeight, b.clientHeight]; }"
        whole, shown = passes.evaluate(box)
        assert whole <= shown  # the asked-about table: every row in view, none below a scroll
        whole, shown = steps.evaluate(box)
        assert steps.get_by_role("row").count() == 65 and whole > 2 * shown  # 64 steps, in a box that scrolls
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        no_exception(page)
    finally:
        context.close()


@pytest.mark.parametrize("width,height,touch", [(1366, 768, False), (390, 844, True)])
def test_the_influence_maps_sit_side_by_side_on_a_laptop_and_one_under_another_on_a_phone(app_url, browser, width,
                                                                                          height, touch):
    """As one Vega facet the three influence maps were 727 px wide, and on a 390 px phone they scrolled
    sideways inside their 358 px box. Each is a chart of its own now, in a row that wraps: three abreast
    at 1366 px, stacked on a phone, each whole on the screen and nothing to scroll sideways."""
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=touch, is_mobile=touch)
    try:
        page = context.new_page()
        open_quiz(page, app_url + "/quiz?q=rnn-decoder-map")
        page.get_by_role("radiogroup", name=re.compile("^Your prediction to Q")).get_by_role("radio").first.check(
            force=True)
        idle(page)
        page.get_by_role("button", name="Commit my prediction and run").click()
        charts = page.locator(".vega-embed")
        expect_whole_charts(charts, 3)
        boxes = [still_box(charts.nth(i), page) for i in range(3)]
        assert all(0 <= box["x"] and box["x"] + box["width"] <= width for box in boxes), boxes
        rows = {round(box["y"]) for box in boxes}
        assert len(rows) == (1 if width > 640 else 3), boxes  # abreast, or one under another
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        no_exception(page)
    finally:
        context.close()


def test_the_first_question_shows_without_scrolling_on_a_laptop_and_its_text_on_a_phone(app_url, laptop, browser):
    """A learner who opened the quiz met no question: at 1280 x 800 the intro, the note on saved
    progress, the score, its per-topic table's expander, the mode, topic and shuffle seed, the review
    switch and Reset stood over it, Q1's heading at 622 px and its choices under the fold; on a
    390 x 844 phone the heading was at 954 px, and later its text still at 842 to 894 px. Now the
    laptop shows Q1's heading, its question and its first choice, and the phone its heading and its
    question, before any scroll."""
    def first_question(page):
        open_quiz(page, app_url + "/quiz")
        expect(page.get_by_text(f"Question 1 of {ASKED}")).to_be_visible(timeout=LOAD)
        heading = page.get_by_role("heading", level=2, name=re.compile(r"^Q1 · "))
        still_box(heading, page)  # once the page has its fonts and every element its place
        assert page.evaluate("() => [window.scrollY, document.querySelector('[data-testid=\"stMain\"]')"
                             ".scrollTop]") == [0, 0]  # nothing scrolled
        return heading

    heading = first_question(laptop)
    expect(heading).to_be_in_viewport(ratio=1)
    expect(laptop.get_by_text("How do an RNN (say a GRU or LSTM) and the Transformer's encoder handle time?")
           ).to_be_in_viewport(ratio=1)
    first_choice = laptop.get_by_role("radiogroup", name="Your answer to Q1").get_by_text("Both read one token")
    expect(first_choice).to_be_in_viewport(ratio=1)  # the answer can be started above the fold
    # Mode, Topic and Review share one row there.
    row = [laptop.locator(f".st-key-{key}").bounding_box() for key in ("quiz_mode", "quiz_topic", "quiz_review")]
    assert max(box["y"] for box in row) < min(box["y"] + box["height"] for box in row)
    no_exception(laptop)
    with page_in(browser, 390, 844) as phone:
        expect(first_question(phone)).to_be_in_viewport(ratio=1)
        expect(phone.get_by_text("How do an RNN (say a GRU or LSTM) and the Transformer's encoder handle time?")
               ).to_be_in_viewport(ratio=1)
        no_exception(phone)


def test_a_progress_file_shows_as_written_never_as_markup(app_url, browser):
    """A progress file is anyone's text: shared, or left in the browser's storage. Its expected answer (a
    backtick closed the code span), the config it was answered with, a given answer with blank lines and
    a version the quiz cannot read all came out as Markdown: live links, and a heading. (Marked again on
    restoring, the expected answer and the config are the model's own now; the given answer still shows.)"""
    import json

    from quizzes.progress import FORMAT

    # A bare web address still becomes a link, by Streamlit's own rule, but one that shows where it goes
    # (render.markdown.as_literal); what must not be is a link whose words hide its address.
    links = 'a[href*="evil.example"], a[href*="t.co"]'
    disguised = "els => els.filter(e => e.textContent.trim() !== e.getAttribute('href')).length"
    doc = {"format": FORMAT, "version": 1, "answers": {"rnn-steps": {
        "correct": False, "given": "3\n\n[typed link](https://t.co/b)\n\n# Big heading",
        "expected": "8` [click me](https://evil.example/phish) `", "config": {"E": "[go](https://t.co/a)"}}}}
    with page_in(browser, 1280, 800) as page:
        page.add_init_script(f"localStorage.setItem({json.dumps(STORE_KEY)}, {json.dumps(json.dumps(doc))})")
        page.goto(app_url + "/quiz?q=2")
        expect(page.get_by_text("Welcome back: 1 answer restored from this browser.")).to_be_visible(timeout=LOAD)
        # The browser's copy is marked again against the model (as an import is), so the expected answer and the
        # config shown are the model's own, not the file's; the learner's given answer stays, and reads as typed.
        expect(page.get_by_text("You answered 3 [typed link](https://t.co/b) # Big heading")).to_be_visible()
        expect(page.get_by_text("Expected, for the config you answered with: 8, that is M")).to_be_visible()
        expect(page.get_by_text("evil.example", exact=False)).to_have_count(0)
        assert page.eval_on_selector_all(links, disguised) == 0
        assert page.get_by_role("heading", name=re.compile("Big heading")).count() == 0
        no_exception(page)
    bad = {"format": FORMAT, "version": "[x](https://t.co/a)", "answers": {}}
    with page_in(browser, 1280, 800) as page:
        page.add_init_script(f"localStorage.setItem({json.dumps(STORE_KEY)}, {json.dumps(json.dumps(bad))})")
        page.goto(app_url + "/quiz")
        expect(page.get_by_text("could not be read", exact=False)).to_be_visible(timeout=LOAD)
        expect(page.get_by_text("'[x](https://t.co/a)'", exact=False)).to_be_visible()
        assert page.eval_on_selector_all(links, disguised) == 0
        no_exception(page)


# Holds the import box clipped at its height before the result came, longer than Streamlit's own growth
# animation: the growing box that ui/components/scroll_to.py must keep the result in view through.
HELD_MS = 2000


STILL_GROWING = """(() => {
  let before = null;  // the box's height in the last frame before the result came
  (function watch() {
    const box = document.querySelector('.st-key-quiz_io details');
    if (box && !document.querySelector('.st-key-quiz_io_note')) before = box.getBoundingClientRect().height;
    requestAnimationFrame(watch);
  })();
  new MutationObserver((_, observer) => {
    if (!document.querySelector('.st-key-quiz_io_note') || before === null) return;
    observer.disconnect();
    const hold = document.createElement('style');
    hold.textContent = `.st-key-quiz_io details { overflow: hidden !important; height: ${before}px !important; }`;
    document.head.append(hold);
    setTimeout(() => hold.remove(), %d);
  }).observe(document, { childList: true, subtree: true });
})()""" % HELD_MS


@pytest.mark.parametrize("width,height,touch,growing", [(1280, 800, False, False), (1280, 800, False, True),
                                                        (390, 844, True, False), (390, 844, True, True)])
def test_an_uploaded_progress_files_result_comes_into_view(app_url, browser, tmp_path, width, height, touch,
                                                           growing):
    """The import's result is said under the import's controls, the paste box and its button between it and
    the file's drop zone: after a file was dropped there, "Imported 1 answer." stood below the window's
    foot (936 px down an 800 px laptop window, 1007 down a 844 px phone), and the learner saw the file
    attached and nothing else. The run after an import brings its result into view.

    ``growing``: the result came while the expander still animated its growth, its box clipped. That
    happened by chance, in 1 of 82 imports in a loop and in 1 full CI run in 6: the result was scrolled
    into view inside the clipped box, then slid 72 px down, under the window's foot, as the box grew."""
    import json

    from quizzes.progress import FORMAT

    doc = {"format": FORMAT, "version": 1, "answers": {"rnn-steps": {"correct": True, "given": "3", "expected": "3"}}}
    upload = tmp_path / "quiz-progress.json"
    upload.write_text(json.dumps(doc))
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=touch, is_mobile=touch)
    try:
        page = context.new_page()
        if growing:
            page.add_init_script(STILL_GROWING)
        open_quiz(page, app_url + "/quiz")
        summary = page.locator(".st-key-quiz_io summary")
        summary.scroll_into_view_if_needed()
        summary.click()
        drop = page.locator('[data-testid="stFileUploaderDropzone"]')
        expect(drop).to_be_visible(timeout=LOAD)
        idle(page)
        drop.scroll_into_view_if_needed()
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(upload))
        note = page.locator(".st-key-quiz_io [data-testid='stAlert']").filter(has_text="Imported 1 answer.")
        expect(note).to_have_count(1, timeout=LOAD)
        idle(page)
        if growing:
            page.wait_for_timeout(HELD_MS + 600)  # the box released, and Streamlit's animation of its growth over
        clear_of_the_header(page, note)
        no_exception(page)
    finally:
        context.close()


def test_two_quiz_tabs_in_one_browser_keep_each_others_answers(app_url, browser):
    """Both tabs share the browser's one copy. Tab A answers question 1, tab B question 2, then A
    question 3: A's save would have written over B's answer (the last writer won); the browser now
    refuses it, and A merges and saves all three."""
    stored = ("() => Object.keys(JSON.parse(localStorage.getItem('transformer-shape-explorer/quiz-progress')"
              " || '{}').answers || {}).length")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        a = context.new_page()
        open_quiz(a, app_url + "/quiz")
        expect(a.get_by_text(f"Question 1 of {ASKED}")).to_be_visible(timeout=LOAD)
        a.get_by_role("radiogroup", name="Your answer to Q1").get_by_role("radio").first.check(force=True)
        a.get_by_role("button", name="Check").click()
        a.wait_for_function(f"({stored})() === 1", timeout=LOAD)

        b = context.new_page()
        b.goto(app_url + "/quiz")
        expect(b.get_by_text("Welcome back: 1 answer restored from this browser.")).to_be_visible(timeout=LOAD)
        click_next(b)
        expect(b.get_by_text(f"Question 2 of {ASKED}")).to_be_visible(timeout=LOAD)
        b.get_by_label("Your answer to Q2").fill("3")
        b.get_by_role("button", name="Check").click()
        b.wait_for_function(f"({stored})() === 2", timeout=LOAD)

        a.bring_to_front()
        click_next(a)
        expect(a.get_by_text(f"Question 2 of {ASKED}")).to_be_visible(timeout=LOAD)
        click_next(a)
        expect(a.get_by_text(f"Question 3 of {ASKED}")).to_be_visible(timeout=LOAD)
        a.get_by_role("radiogroup", name="Your prediction to Q3").get_by_role("radio").first.check(force=True)
        a.get_by_role("button", name="Commit my prediction and run").click()
        a.wait_for_function(f"({stored})() === 3", timeout=LOAD)
        three = re.compile(rf"^Score: \d right, \d wrong, {ASKED - 3} not tried")
        expect(a.get_by_text(three)).to_be_visible(timeout=LOAD)
        no_exception(a)
        no_exception(b)
    finally:
        context.close()


def test_the_evidence_charts_show_every_legend_entry_and_bar_name(app_url, laptop):
    """Drawn with Streamlit's default sizing, an evidence chart's height took in its axes and legend: the
    legend of eight dimensions past max_len ended after six, and the permutation's two bars got 14 px a
    row, their names drawn over each other."""
    import json

    from quizzes.progress import FORMAT

    doc = {"format": FORMAT, "version": 1, "answers": {
        qid: {"correct": False, "given": "?", "expected": "x"} for qid in ("pos-past-max", "rnn-shuffle")}}
    page = laptop
    page.add_init_script(f"localStorage.setItem({json.dumps(STORE_KEY)}, {json.dumps(json.dumps(doc))})")
    open_quiz(page, app_url + "/quiz?mode=set")
    expect(page.get_by_text("Welcome back: 2 answers restored from this browser.")).to_be_visible(timeout=LOAD)
    idle(page)
    curves = page.locator('[data-testid="stVegaLiteChart"][aria-label^="Positions past max_len"]')
    bars = page.locator('[data-testid="stVegaLiteChart"][aria-label^="Reverse the input order"]')
    for chart in (curves, bars):
        expect(chart.locator(":scope > .marks")).to_be_visible(timeout=LOAD)  # the chart is Vega's own box
    no_exception(page)
    box = curves.bounding_box()
    labels = curves.evaluate("""e => [...e.querySelectorAll('.role-legend-label text')]
        .map(t => [t.textContent, t.getBoundingClientRect().bottom])""")
    assert len(labels) == 8 and all(bottom <= box["y"] + box["height"] for _, bottom in labels), (labels, box)
    names = bars.evaluate("""e => [...e.querySelectorAll('.role-axis-label text')]
        .filter(t => /encoding/.test(t.textContent)).map(t => t.getBoundingClientRect())
        .map(r => [r.top, r.bottom])""")
    assert len(names) == 2 and min(names[0][1], names[1][1]) <= max(names[0][0], names[1][0]), names


@pytest.mark.parametrize("width,height", [(320, 568), (360, 740)])
def test_the_parameter_counts_bar_names_and_axis_read_whole_on_a_phone(app_url, browser, width, height):
    """The parameter counts' names run down the side, one line each, and on a 320 px phone
    "Llama-2-70B widths: W^Q, W^K, W^V" took 184 px of the chart's 256: the bars had 50 px, and the axis
    title "parameters", centred under them, ran 3 px past the chart's edge, cut after "parameter". There each
    name breaks after its colon or before its bracket, in 11 px type: the bars get 145 px and the title
    ends inside the chart. A 360 px phone's names keep one line, in 12 px, as before."""
    import json

    from quizzes.progress import FORMAT

    doc = {"format": FORMAT, "version": 1, "answers": {"params-paper-base": {"correct": False, "given": "?",
                                                                            "expected": "x"}}}
    with page_in(browser, width, height) as page:
        page.add_init_script(f"localStorage.setItem({json.dumps(STORE_KEY)}, {json.dumps(json.dumps(doc))})")
        open_quiz(page, app_url + "/quiz?mode=set&topic=parameter-counts")
        expect(page.get_by_text("Welcome back: 1 answer restored from this browser.")).to_be_visible(timeout=LOAD)
        idle(page)
        chart = page.locator('[data-testid="stVegaLiteChart"][aria-label^="Parameter counts"]')
        expect(chart.locator(":scope > .marks")).to_be_visible(timeout=LOAD)
        no_exception(page)
        box = chart.bounding_box()
        drawn = chart.evaluate("""e => [...e.querySelectorAll('g.role-axis-title text, g.role-axis-label text')]
            .filter(t => t.getAttribute('opacity') !== '0').map(t => { const r = t.getBoundingClientRect();
                return [t.textContent, r.left, r.right, t.querySelectorAll('tspan').length || 1,
                        t.getAttribute('font-size')]; })""")
        names = [d for d in drawn if "(" in d[0] or ":" in d[0]]
        assert len(names) == 7 and any(d[0] == "parameters" for d in drawn), drawn
        edge = box["x"] + box["width"] + 1  # "1B", centred on its tick at the plot's end, ends 0.5 px past it at 360
        assert all(box["x"] <= left and right <= edge for _, left, right, _, _ in drawn), (drawn, box)
        grid = chart.evaluate("e => e.querySelector('g.role-axis-grid').getBoundingClientRect().width")
        assert grid >= 90, grid  # bars a learner can compare: 145 px at 320 (50 before), 95 at 360
        assert {(lines, size) for _, _, _, lines, size in names} == ({(2, "11px")} if width < 350 else {(1, "12px")})


def test_a_decoder_only_link_asks_that_models_questions_and_marks_one_right(app_url, page):
    """A newcomer's link to a Llama-like model: the page says how many questions that family has, the KV-cache
    topic opens on the cache's shape, and its answer in symbols is right, with the live evidence under it."""
    cfg = TransformerConfig(arch="decoder-only", nhead=4, nhead_kv=2, positional="rope", norm="rmsnorm",
                            activation="swiglu", norm_first=True, bias=False)
    open_quiz(page, app_url + "/quiz?" + config_query(cfg) + "&topic=kv-cache")
    mine = len(questions_for(None, cfg))
    score = (f"Score: 0 right, 0 wrong, {mine} not tried yet, counting only the questions about this model: {mine} "
             f"of {IN_ALL} questions apply to decoder-only.")
    expect(page.get_by_text(score)).to_be_visible(timeout=LOAD)
    expect(page.get_by_text("Question 1 of 5")).to_be_visible()
    box = page.get_by_role("textbox", name="Your answer to Q1")
    box.fill("(layers, 2, N, nhead_kv, M, d_k)")
    box.press("Enter")
    expect(page.get_by_role("alert")).to_have_text("Q1: right. The explanation and the live evidence follow.",
                                                   timeout=LOAD)
    expect(page.get_by_text("Expected, for the config you answered with: (2, 2, 2, 2, 8, 4)")).to_be_visible()
    expect(page.get_by_text("Live evidence: The forward pass, tensor by tensor")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]arch=decoder-only(&|$)"))
    no_exception(page)


def test_an_answer_on_your_own_text_is_still_right_in_a_new_tab(app_url, page):
    """A learner types two lines into the Explorer's box, answers a question on their first line on the quiz,
    and comes back in a new tab with the box empty: the browser's copy is marked again on the text it was given
    on, not on the example text, so the answer is still right."""
    page.goto(app_url + "/explorer?text=one%20two%0Athree&tokens=word")
    expect(page.get_by_text("Your text (optional): run it through the model")).to_be_visible(timeout=LOAD)
    idle(page)
    go_to(page, "Quiz")
    topic = page.locator('[data-testid="stSelectbox"]').filter(has_text="Topic")
    expect(topic).to_be_visible(timeout=LOAD)
    idle(page)
    topic.click()
    page.get_by_role("option", name="Your text").click()
    expect(page).to_have_url(re.compile(r"[?&]topic=your-text&"), timeout=LOAD)
    idle(page)
    box = page.get_by_role("textbox", name="Your answer to Q1")
    box.fill("3")  # "one two": one, a space, two (the example's first line has 11)
    box.press("Enter")
    expect(page.get_by_role("alert")).to_have_text(re.compile(r"^Q1: right\."), timeout=LOAD)
    page.wait_for_function(f"() => Object.keys(JSON.parse(localStorage.getItem('{STORE_KEY}') || '{{}}').answers || {{}})"
                           ".length === 1", timeout=LOAD)  # the browser keeps the answer
    page.close()

    again = page.context.new_page()
    open_quiz(again, app_url + "/quiz?topic=your-text")
    expect(again.get_by_text("Welcome back: 1 answer restored from this browser.", exact=True)).to_be_visible(
        timeout=LOAD)
    expect(again.get_by_text(re.compile(r"^Score: 1 right, 0 wrong"))).to_be_visible()
    no_exception(again)
