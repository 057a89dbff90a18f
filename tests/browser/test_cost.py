"""The Cost and Compare pages in a real browser: each opens from its link with its figures and no error."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.browser import LOAD, idle, no_exception

pytestmark = pytest.mark.browser


def test_the_cost_page_opens_with_its_figures(app_url, page):
    page.goto(app_url + "/cost?preset=Llama-2-70B")
    expect(page.get_by_role("heading", name="What this model costs")).to_be_visible(timeout=LOAD)
    expect(page.get_by_text("68,976,648,192 parameters", exact=False)).to_be_visible(timeout=LOAD)
    idle(page)
    expect(page.get_by_role("heading", name="Decode speed bound")).to_be_visible()
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="this link")).to_have_count(0)
    no_exception(page)


def test_the_compare_link_opens_both_models(app_url, page):
    page.goto(app_url + "/compare?a=Llama-2-70B&b=Mixtral-8x7B")
    expect(page.get_by_text("Llama-2-70B against Mixtral-8x7B", exact=False)).to_be_visible(timeout=LOAD)
    expect(page.get_by_text("68,976,648,192", exact=True).first).to_be_visible()
    expect(page.get_by_text("46,702,792,704", exact=True).first).to_be_visible()
    idle(page)
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="this link")).to_have_count(0)
    no_exception(page)
