"""The shared sidebar in a real browser: fast key presses leave the sliders, the table and the link
agreeing, M_target and d_ff follow M and E, every preset's name reads whole on a projector, and the
sidebar's hidden helpers take no room."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from core import PRESETS
from tests.support.browser import (LOAD, idle, no_exception, page_in, reconnected, shape_cell, slider_thumb,
                                   sockets_opened, thumb_value)

pytestmark = pytest.mark.browser


def test_fast_key_presses_leave_the_sliders_the_table_and_the_link_agreeing(app_url, page):
    """Four presses of N's arrow key 40 ms apart (a quick tap, or a key held down) came to the server
    before the runs they started had reached the browser, with the preset's name the browser still
    showed: the preset was applied again, and the slider showed N = 2 beside a table at N = 6. Fast
    presses of E left d_ff behind 4E the same way."""
    page.goto(app_url)
    expect(shape_cell(page, 0)).to_have_text("(2, 8)", timeout=LOAD)
    idle(page)
    for label, presses in (("N — batch size", 4), ("E — embedding size", 3)):
        thumb = slider_thumb(page, label)
        thumb.focus()
        for _ in range(presses):
            page.keyboard.press("ArrowRight")  # to the focused thumb, without waiting for it to be ready
            page.wait_for_timeout(40)  # the learner's pace, not a timing check
    expect(page).to_have_url(re.compile(r"[?&]N=6&.*E=19&nhead=1&.*d_ff=76(&|$)"), timeout=LOAD)
    expect(shape_cell(page, 1)).to_have_text("(6, 8, 19)", timeout=LOAD)  # row 2: the token embedding, (N, M, E)
    for label, value in (("N — batch size", "6"), ("E — embedding size", "19"), ("d_ff", "76")):
        expect(thumb_value(page, label)).to_have_text(value, timeout=LOAD)
    expect(page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"] input').first).to_have_value("(custom)")
    no_exception(page)


def test_target_length_and_d_ff_follow_their_sliders_and_back_undoes_both(app_url, page):
    """A teacher moves M and E with the keyboard: the M_target and d_ff sliders move with them on screen,
    the table and the URL too, and one Back undoes a move with its follower."""
    page.goto(app_url + "/?M=8&E=16")
    expect(shape_cell(page, 0)).to_have_text("(2, 8)", timeout=LOAD)
    # Wait for the follower, not only idle(): idle() can return before the key's run begins.
    for label, follower, moved in (("M — source length", "M_target — target length", "9"),
                                   ("E — embedding size", "d_ff — FFN hidden width", "68")):
        thumb = slider_thumb(page, label)
        thumb.focus()
        thumb.press("ArrowRight")
        expect(thumb_value(page, follower)).to_have_text(moved, timeout=LOAD)
        idle(page)
    expect(shape_cell(page, 12)).to_have_text("(2, 9, 17)")  # row 13, the decoder output: (N, M_target, E)
    expect(page).to_have_url(re.compile(r"M_target=9&E=17&.*d_ff=68(&|$)"))
    page.go_back()
    expect(thumb_value(page, "d_ff — FFN hidden width")).to_have_text("64", timeout=LOAD)
    expect(thumb_value(page, "M_target — target length")).to_have_text("9")
    no_exception(page)


def test_a_move_in_a_tab_whose_server_restarted_counts_with_its_followers(restartable_app, page):
    """A tab whose server went away (its replica restarted) reconnects to a new session, and the learner's next
    move is that session's first message. The link's values were written over it, so E stepped back to the
    link's. Now the move counts, with all that follows it: d_ff (4E), nhead snapped to a divisor of E, nhead_kv,
    and the preset no longer named."""
    opened = sockets_opened(page)
    page.goto(restartable_app.url + "/?preset=tiny-gpt")
    expect(shape_cell(page, 1)).to_have_text("(2, 8, 16)", timeout=LOAD)  # row 2: the token embedding, (N, M, E)
    idle(page)
    link = page.url
    restartable_app.restart()
    reconnected(page, opened, 1)
    assert page.url == link  # the page keeps its link until the learner acts
    thumb = slider_thumb(page, "E — embedding size")
    thumb.focus()
    thumb.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]E=17&nhead=1&.*d_ff=68&.*nhead_kv=1(&|$)"), timeout=LOAD)
    expect(shape_cell(page, 1)).to_have_text("(2, 8, 17)", timeout=LOAD)
    for label, value in (("E — embedding size", "17"), ("nhead — attention heads", "1"), ("d_ff", "68")):
        expect(thumb_value(page, label)).to_have_text(value, timeout=LOAD)
    expect(page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"] input').first).to_have_value("(custom)")
    no_exception(page)


def test_every_preset_name_reads_whole_in_the_sidebar_of_a_projector_screen(app_url, browser):
    """A class reads the chosen preset off the projector. At 1024 px (and 1280: the sidebar is as wide)
    the box showed "Tiny worked example (M=3, E=4," and its list "Small character model (N=5, M=8, E=8"
    cut at the edge. Every name now ends inside the list and, once chosen, inside the box."""
    with page_in(browser, 1024, 768) as page:
        page.goto(app_url)
        box = page.get_by_role("combobox", name="Preset")
        expect(box).to_have_value(next(iter(PRESETS)), timeout=LOAD)
        for name in PRESETS:
            idle(page)
            page.locator(".st-key-w_preset").get_by_role("button", name="Open").click()
            option = page.get_by_role("option", name=name, exact=True)
            assert option.evaluate("e => e.firstElementChild.scrollWidth <= e.firstElementChild.clientWidth"), name
            option.click()
            expect(box).to_have_value(name, timeout=LOAD)
            assert box.evaluate("e => e.scrollWidth <= e.clientWidth"), name  # the chosen name, not cut
        no_exception(page)


def test_the_sidebars_hidden_helpers_take_no_room(app_url, laptop):
    """The theme watcher and the scroll-keys marker draw nothing, but each one's box took one of the sidebar's
    16 px gaps at its foot. Hidden, they take none (and still run: the theme switch and keyboard tests)."""
    page = laptop
    page.goto(app_url + "/explorer")
    idle(page)
    helpers = page.locator('[data-testid="stSidebar"] .st-key-page_helpers')
    for key in ("theme_watch", "scroll_keys"):
        expect(helpers.locator(f".st-key-{key}")).to_have_count(1, timeout=LOAD)
    expect(helpers).to_have_css("display", "none")  # so no box and no gap (waited for: a run may be redrawing)
    # Nor does the wrapper Streamlit puts round a container: the sidebar's last child with a box is the line
    # under the closed Architecture group.
    last = page.locator('[data-testid="stSidebarUserContent"] [data-testid="stVerticalBlock"]').first.evaluate(
        "b => { const e = [...b.children].filter(e => getComputedStyle(e).display !== 'none').pop();"
        " return [e.className, e.innerText]; }")
    assert "page_helpers" not in last[0] and last[1].startswith("encoder-decoder, post-norm, "), last
    no_exception(page)


def test_a_text_typed_on_the_explorer_shows_its_sizes_in_the_disabled_sidebar_until_given_back(app_url, page):
    """What runs is what the sidebar shows: "the cat sat on the mat" (words) runs N = 1, M = 11 and
    vocab_size = 7, and those three sliders read so, greyed out; the button at the sidebar's top gives the
    learner's own sliders back."""
    page.goto(app_url + "/?N=3")
    expect(shape_cell(page, 0)).to_have_text("(3, 8)", timeout=LOAD)
    idle(page)
    box = page.get_by_role("textbox", name="Your text (optional): run it through the model")
    box.fill("the cat sat on the mat")
    box.press("Control+Enter")  # a text area sends its text on Ctrl+Enter (or on leaving it)
    expect(page.get_by_text(re.compile(r"^N=1, M=11, M_target=11, E=16,"))).to_be_visible(timeout=LOAD)
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text("Your text on this page sets N, M, M_target and vocab_size.")).to_be_visible()
    for label, value in (("N — batch size", "1"), ("M — source length", "11"), ("vocab_size", "7")):
        expect(thumb_value(page, label)).to_have_text(value, timeout=LOAD)
        expect(slider_thumb(page, label)).to_be_disabled()
    expect(slider_thumb(page, "E — embedding size")).to_be_enabled()
    sidebar.get_by_role("button", name="Clear the text, use the sliders").click()
    expect(shape_cell(page, 0)).to_have_text("(3, 8)", timeout=LOAD)
    for label, value in (("N — batch size", "3"), ("M — source length", "8"), ("vocab_size", "100")):
        expect(thumb_value(page, label)).to_have_text(value, timeout=LOAD)
        expect(slider_thumb(page, label)).to_be_enabled()
    expect(box).to_have_value("")
    no_exception(page)
