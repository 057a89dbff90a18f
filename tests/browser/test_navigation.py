"""Across pages, in a real browser: every page of the navigation opens under its own title with the
sidebar's config, a first visit to a page's URL runs the whole app, Back and Forward step through the
configs, each page keeps its own settings across a visit elsewhere, a shared link reproduces the view
(and its garbage is named, on a phone too), and no page asks anything of another site."""

from __future__ import annotations

import base64
import re

import pytest
from playwright.sync_api import expect

from core import DEFAULT
from harness.server import free_port, start_server, stop_server, wait_healthy
from quizzes import questions_for
from tests.support.browser import (
    LOAD, NAV, go_to, idle, keep, no_exception, open_quiz, page_in, reconnected, shape_cell, slider_thumb,
    sockets_opened, thumb_value,
)

pytestmark = pytest.mark.browser

# The quiz asks the default model, the paper's encoder-decoder, its own questions.
PAPERS_QUESTIONS = len(questions_for(None, DEFAULT))


def test_first_visit_to_a_page_url_runs_the_whole_app(fresh_app_url, page):
    """On a server of its own: only a fresh server's first run can fall into Streamlit's legacy
    pages/ mode (the page alone, no sidebar, every module in pages/ listed as a page)."""
    page.goto(fresh_app_url + "/attention")
    expect(page.locator('[data-testid="stVegaLiteChart"]').first).to_be_visible(timeout=LOAD)
    links = page.locator(".st-key-page_nav a")
    expect(links).to_have_count(len(NAV))
    expect(links).to_have_text([re.compile(re.escape(text) + "$") for text, _, _ in NAV])  # after its icon
    expect(page.get_by_text("Model sizes")).to_be_visible()
    no_exception(page)


# Every text the sidebar's navigation shows, in order, from the page's first node on.
NAV_TEXTS_SEEN = """
window.navSeen = [];
new MutationObserver(() => {
  const nav = document.querySelector('.st-key-page_nav');
  const text = nav === null ? null : nav.innerText;
  if (text && window.navSeen[window.navSeen.length - 1] !== text) window.navSeen.push(text);
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def test_a_fresh_servers_first_load_never_shows_the_bare_page_list(fresh_app_url, page):
    """Streamlit's legacy pages/ mode lists every module in pages/ ("streamlit app", "explorer", ...) until
    st.navigation runs; a learner's first look at the app must show its own navigation only."""
    page.add_init_script(NAV_TEXTS_SEEN)
    page.goto(fresh_app_url)
    expect(shape_cell(page, 0)).to_have_text("(2, 8)", timeout=LOAD)
    expect(page.locator(".st-key-page_nav a")).to_have_count(len(NAV))
    seen = page.evaluate("window.navSeen")
    assert seen and all("streamlit app" not in text.lower() for text in seen), seen
    assert all(text == seen[-1] for text in seen), seen  # one list, the app's own, from the first


def test_keyboard_slider_changes_the_table_and_every_page_opens(app_url, page, tmp_path):
    page.goto(app_url)
    expect(shape_cell(page, 0)).to_have_text("(2, 8)", timeout=LOAD)  # row 1: input tokens (N, M)
    expect(shape_cell(page, 5)).to_have_text("(2, 2, 8, 8)")  # row 6: attention weights (N, nhead, M, M)

    thumb = slider_thumb(page, "N — batch size")
    thumb.focus()
    thumb.press("ArrowRight")
    expect(shape_cell(page, 0)).to_have_text("(3, 8)", timeout=LOAD)
    expect(shape_cell(page, 5)).to_have_text("(3, 2, 8, 8)")
    expect(page).to_have_url(re.compile(r"[?&]N=3(&|$)"))
    # The architecture figure is drawn, named for a screen reader, and its labels follow too.
    figure = page.get_by_role("img", name=re.compile("^The Transformer: one of its 2 encoder layers"))
    expect(figure).to_be_visible()
    expect(figure).to_have_attribute("src", re.compile("^data:image/svg"))
    svg = base64.b64decode(figure.get_attribute("src").split(",", 1)[1]).decode()
    arrow = re.search(r'<g class="arrow" data-from="src" data-to="src_emb">.*?<text[^>]*>([^<]*)</text>', svg)
    assert arrow and arrow.group(1) == "(3, 8)"
    no_exception(page)
    shot = tmp_path / "explorer_after_slider.png"
    page.screenshot(path=shot, full_page=True)
    keep(shot, tmp_path)

    for text, path, ready in NAV:
        go_to(page, text)
        where = rf"/({path})?(\?|$)" if path == "explorer" else rf"/{path}(\?|$)"  # the default page is also "/"
        expect(page).to_have_url(re.compile(where), timeout=LOAD)
        expect(page.locator(ready).first).to_be_visible(timeout=LOAD)
        no_exception(page)
        # Each page names itself in the tab's title, which a screen reader announces on arrival.
        expect(page).to_have_title(f"{text} · Transformer Shape Explorer")
        # The sidebar's config follows the learner from page to page.
        expect(thumb_value(page, "N — batch size")).to_have_text("3")
        shot = tmp_path / f"page_{path}.png"
        page.screenshot(path=shot, full_page=True)
        keep(shot, tmp_path)
        assert shot.stat().st_size > 10_000


def test_a_shared_url_reproduces_the_view_and_garbage_warns(app_url, page, tmp_path):
    page.goto(app_url + "/?N=5&M=4&E=32&nhead=4")
    expect(shape_cell(page, 0)).to_have_text("(5, 4)", timeout=LOAD)
    expect(shape_cell(page, 4)).to_have_text("(5, 4, 8)")  # row 5: one head, d_k = 32 / 4
    page.goto(app_url + "/?E=10&nhead=4&M=999999999")
    expect(page.get_by_text("does not divide E=10")).to_be_visible(timeout=LOAD)
    expect(page.get_by_text("M=999999999 is outside")).to_be_visible()
    expect(shape_cell(page, 4)).to_have_text("(2, 8192, 2)")  # M at its top step; nhead fell back to 5: d_k = 2
    expect(page.get_by_text("Shape-only pass.")).to_be_visible()  # over the memory budget
    expect(page.get_by_text("Page not found")).to_have_count(0)
    no_exception(page)
    shot = tmp_path / "explorer_url_garbage.png"
    page.screenshot(path=shot, full_page=True)
    keep(shot, tmp_path)


def test_back_and_forward_step_through_the_configs(app_url, page):
    """Every slider move is an entry in the browser's history: Back undoes it (slider, table and
    URL together) and Forward redoes it, also across a page switch. Before, Back changed nothing:
    the sidebar wrote its own values straight back over the URL."""
    page.goto(app_url + "/?N=2")
    expect(shape_cell(page, 0)).to_have_text("(2, 8)", timeout=LOAD)
    thumb = slider_thumb(page, "N — batch size")
    for n in (3, 4):
        thumb.focus()
        thumb.press("ArrowRight")
        expect(shape_cell(page, 0)).to_have_text(f"({n}, 8)", timeout=LOAD)
        expect(page).to_have_url(re.compile(rf"[?&]N={n}(&|$)"))

    page.go_back()
    expect(shape_cell(page, 0)).to_have_text("(3, 8)", timeout=LOAD)
    expect(thumb_value(page, "N — batch size")).to_have_text("3")
    assert "N=3&" in page.evaluate("location.search")
    page.go_forward()
    expect(shape_cell(page, 0)).to_have_text("(4, 8)", timeout=LOAD)
    expect(thumb_value(page, "N — batch size")).to_have_text("4")

    go_to(page, "Attention")
    expect(page.locator('[data-testid="stVegaLiteChart"]').first).to_be_visible(timeout=LOAD)
    thumb = slider_thumb(page, "N — batch size")
    thumb.focus()
    thumb.press("ArrowRight")  # N = 5 on the attention page
    expect(page).to_have_url(re.compile(r"/attention\?.*N=5(&|$)"), timeout=LOAD)
    page.go_back()  # N = 4, still on the attention page
    expect(thumb_value(page, "N — batch size")).to_have_text("4", timeout=LOAD)
    assert page.evaluate("location.pathname").endswith("/attention")
    page.go_back()
    for _ in range(2):
        if not page.evaluate("location.pathname").endswith("/attention"):
            break
        # Streamlit clears the query on a page switch and sometimes leaves a second /attention
        # entry in the history, bare or already filled in: either way N must stay 4 there.
        expect(thumb_value(page, "N — batch size")).to_have_text("4", timeout=LOAD)
        page.go_back()
    expect(shape_cell(page, 0)).to_have_text("(4, 8)", timeout=LOAD)  # the explorer, with its N = 4
    no_exception(page)


def test_each_page_keeps_its_own_settings_across_a_visit_elsewhere(app_url, page):
    """A learner checks a shape in the explorer in the middle of a quiz question and comes back:
    the topic, the question and the half-typed answer are still there. Likewise the attention
    page's choices and the training lab's sliders. Before, Streamlit dropped every widget the other
    page did not draw: the quiz came back on "All topics" (so at another question) with the answer
    box empty.

    The attention and training-lab changes are followed by a step whose result only the server can
    draw, so that the server has them before the page switch (a switch sends only the new page's
    widgets)."""
    open_quiz(page, app_url + "/quiz")
    expect(page.get_by_text(f"Question 1 of {PAPERS_QUESTIONS}")).to_be_visible(timeout=LOAD)
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Topic").click()
    page.get_by_role("option", name="Masking").click()
    expect(page.get_by_text(re.compile(r"Question 1 of \d$"))).to_be_visible(timeout=LOAD)  # 7 masking questions
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_text(re.compile(r"Question 2 of \d$"))).to_be_visible(timeout=LOAD)
    question = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=re.compile(r"^Q2 · "))
    text = question.inner_text()
    answer = page.locator('[data-testid="stTextInput"]').filter(has_text="Your answer").locator("input")
    answer.fill("a draft")
    answer.press("Tab")  # Streamlit takes a text input's value when it loses focus
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_text(re.compile(r"Question 3 of \d$"))).to_be_visible(timeout=LOAD)
    page.get_by_role("button", name="Previous").click()  # often before Next's run has finished
    # Wait for the server to draw Q2 again: a stale Q2 box can still be on the page while Next's run finishes.
    expect(page.get_by_text(re.compile(r"Question 2 of \d$"))).to_be_visible(timeout=LOAD)
    expect(answer).to_have_value("a draft", timeout=LOAD)  # kept while Q3 was shown

    go_to(page, "Attention")
    head = page.locator('[data-testid="stSelectbox"]').filter(has_text="head")
    expect(head).to_be_visible(timeout=LOAD)
    head.click()
    page.get_by_role("option", name="1", exact=True).click()
    expect(head.get_by_role("combobox")).to_have_value("1", timeout=LOAD)
    page.get_by_role("radio", name="cross-attention", exact=True).check(force=True)
    cross_note = page.get_by_text("Target queries look at source keys")
    expect(cross_note).to_be_visible(timeout=LOAD)

    go_to(page, "Training lab")
    steps = slider_thumb(page, "steps").first
    expect(steps).to_be_visible(timeout=LOAD)
    before = thumb_value(page, "steps").first.inner_text()
    steps.focus()
    steps.press("ArrowRight")
    expect(thumb_value(page, "steps").first).not_to_have_text(before, timeout=LOAD)
    moved = thumb_value(page, "steps").first.inner_text()
    n = slider_thumb(page, "N — batch size")
    n.focus()
    n.press("ArrowRight")  # N = 3: the server writes it into the URL
    expect(page).to_have_url(re.compile(r"[?&]N=3(&|$)"), timeout=LOAD)

    go_to(page, "Explorer")
    expect(shape_cell(page, 0)).to_have_text("(3, 8)", timeout=LOAD)
    go_to(page, "Quiz")
    expect(question).to_have_text(text, timeout=LOAD)
    expect(answer).to_have_value("a draft")
    go_to(page, "Attention")
    expect(cross_note).to_be_visible(timeout=LOAD)
    expect(head.get_by_role("combobox")).to_have_value("1")
    go_to(page, "Training lab")
    expect(thumb_value(page, "steps").first).to_have_text(moved, timeout=LOAD)
    expect(page.get_by_text("Session State API")).to_have_count(0)  # no warning about values set twice
    no_exception(page)


def test_no_page_asks_anything_of_another_site(app_url, page):
    """Every request a page makes goes to the app's own server (the tab's icon included, which a
    ":material/...:" icon would fetch from fonts.gstatic.com): nothing leaks, and it works offline."""
    elsewhere = []
    page.on("request", lambda r: None if r.url.startswith((app_url, "data:", "blob:")) else elsewhere.append(r.url))
    for _, path, ready in NAV:
        page.goto(f"{app_url}/{path}")
        expect(page.locator(ready).first).to_be_visible(timeout=LOAD)
    assert page.evaluate("document.querySelector(\"link[rel='shortcut icon']\").href").startswith("data:image/svg")
    assert elsewhere == []


def test_the_explorer_also_answers_at_its_own_path(app_url, page):
    """/explorer, guessed from /attention and /quiz, opens the explorer with the URL's config and
    no "Page not found" dialog over it; the sidebar still lists each page once."""
    page.goto(app_url + "/explorer?N=5&M=4&E=32&nhead=4")
    expect(shape_cell(page, 0)).to_have_text("(5, 4)", timeout=LOAD)
    expect(shape_cell(page, 4)).to_have_text("(5, 4, 8)")  # row 5: one head, d_k = 32 / 4
    expect(page.get_by_text("Page not found")).to_have_count(0)
    expect(page.locator(".st-key-page_nav a")).to_have_count(len(NAV))
    expect(page.get_by_text("The table scrolls sideways")).to_be_hidden()  # a phone's caption only
    go_to(page, "Quiz")
    expect(page).to_have_url(re.compile(r"/quiz\?"), timeout=LOAD)
    no_exception(page)


@pytest.mark.parametrize("width,height", [(390, 844), (360, 740)])
def test_a_phone_shows_a_links_warning_the_tables_hint_and_the_quiz_buttons_in_one_row(app_url, browser, width,
                                                                                       height):
    """What a learner meets who opens a teacher's link on a phone, where Streamlit collapses the sidebar.
    A mistyped link's warnings sat in that sidebar, so the phone showed other sizes than the link's
    and said nothing (a value in it, such as a Markdown link, shows as typed). The table's formula
    column starts off screen and the grid shows no scrollbar,
    so a phone-only caption says it scrolls. At 360 px the quiz's Next wrapped alone under Previous."""
    with page_in(browser, width, height) as page:
        page.goto(app_url + "/?E=10&nhead=4&positional=[x](http://example.com)")
        expect(shape_cell(page, 0)).to_have_text("(2, 8)", timeout=LOAD)
        expect(page.locator('[data-testid="stSidebarContent"]')).not_to_be_in_viewport()  # collapsed
        warning = page.locator('[data-testid="stAlert"]').filter(has_text="Part of this link could not be used")
        expect(warning.get_by_text("nhead=4 does not divide E=10; using nhead=5")).to_be_visible()
        # The link's own text shows as typed, with no backslash from the escaping and no link named "x".
        expect(warning.get_by_text("positional='[x](http://example.com)' is not")).to_be_visible()
        expect(warning.get_by_role("link", name="x", exact=True)).to_have_count(0)
        expect(page.get_by_text("The table scrolls sideways")).to_be_visible()
        no_exception(page)
        assert page.evaluate("document.documentElement.scrollWidth") <= width

        open_quiz(page, app_url + "/quiz")
        nav = page.locator(".st-key-quiz_nav")
        row = [nav.locator(".st-key-quiz_prev button"), nav.get_by_text(f"Question 1 of {PAPERS_QUESTIONS}"),
               nav.locator(".st-key-quiz_next button")]
        expect(row[2]).to_be_visible(timeout=LOAD)
        previous, count, following = (part.bounding_box() for part in row)
        middle = previous["y"] + previous["height"] / 2
        assert abs(following["y"] + following["height"] / 2 - middle) < 2  # Next on Previous's row
        assert abs(count["y"] + count["height"] / 2 - middle) < 2
        assert previous["x"] + previous["width"] <= count["x"] and count["x"] + count["width"] <= following["x"]
        assert following["x"] + following["width"] <= width
        no_exception(page)


def test_after_a_server_restart_the_page_navigation_keeps_the_config(page, tmp_path):
    """A tab stays open while its server restarts (Community Cloud wakes a sleeping app so; a replica is
    replaced so). Its next action starts a new session: a page switch then must not open the default."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(port, tmp_path / "before.log")
    try:
        wait_healthy(url, server, 60)
        opened = sockets_opened(page)
        page.goto(f"{url}/attention?N=4&M=12")
        expect(page.locator('[data-testid="stVegaLiteChart"]').first).to_be_visible(timeout=LOAD)
        idle(page)
        stop_server(server)
        server = start_server(port, tmp_path / "after.log")
        wait_healthy(url, server, 60)
        reconnected(page, opened, 1)  # a click while the tab is still reconnecting reaches no server
        go_to(page, "Explorer")
        expect(shape_cell(page, 0)).to_have_text("(4, 12)", timeout=LOAD)
        expect(page).to_have_url(re.compile(r"\?N=4&M=12&"))
        no_exception(page)
    finally:
        stop_server(server)
