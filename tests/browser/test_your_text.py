"""The "Your text" box in a real browser: the heatmap's axes carry the learner's tokens, and hostile text
leaves the page working without turning into markup."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import LOAD, idle, no_exception

pytestmark = pytest.mark.browser

HOSTILE = ('<b>bold</b> <script>window.pwned = 1</script> <img src=x onerror="window.pwned = 2"> '
           "**md** \u202eevil\u202c שלום 🙂 a\x07b")


def type_text(page, text: str) -> None:
    box = page.get_by_role("textbox", name="Your text (optional): run it through the model")
    expect(box).to_be_visible(timeout=LOAD)
    idle(page)
    box.fill(text)
    box.press("Control+Enter")  # a text area sends its text on Ctrl+Enter (or on leaving it)
    idle(page)


def test_the_attention_heatmap_shows_the_tokens_as_labels(app_url, page):
    page.goto(app_url + "/attention")
    type_text(page, "the cat sat on the mat")
    expect(page.get_by_text("Your text, sequence 0; weights: untrained")).to_be_visible(timeout=LOAD)
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    expect(charts).to_have_count(2, timeout=LOAD)  # the page's weights and mask: no second map over the text
    for chart in (charts.first, charts.last):
        for label in ("0 the", "2 cat", "8 the", "10 mat"):
            expect(chart.locator("svg text", has_text=label).first).to_be_attached(timeout=LOAD)
        expect(chart.locator(".role-axis-label text", has_text=re.compile(r"^\d+$"))).to_have_count(0)  # no bare positions
    no_exception(page)


@pytest.mark.parametrize("path", ["/", "/attention"])
def test_hostile_text_leaves_the_page_working_and_injects_no_markup(app_url, page, path):
    page.goto(app_url + path)
    type_text(page, HOSTILE)
    expect(page.get_by_text("Your text on this page sets")).to_be_visible(timeout=LOAD)  # the sidebar says why
    no_exception(page)
    assert page.evaluate("() => window.pwned") is None
    assert page.locator("b", has_text="bold").count() == 0
    assert page.locator('img[src="x"]').count() == 0
    assert page.evaluate("() => [...document.scripts].filter(s => s.textContent.includes('pwned')).length") == 0
    type_text(page, "word " * 2000)  # 10,000 characters
    expect(page.get_by_text("cut at 512 tokens")).to_be_visible(timeout=LOAD)
    expect(page.get_by_text("cannot be shared by link")).to_be_visible()
    no_exception(page)
