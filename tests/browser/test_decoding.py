"""The Decoding page in a real browser: a learner opens /decoding, picks beam search, and sees the beams' tree
and the four continuations side by side; the link then holds the run."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import LOAD, idle, no_exception

pytestmark = pytest.mark.browser


def test_beam_search_draws_its_tree_and_the_continuations(app_url, page):
    page.goto(app_url + "/decoding?strategy=greedy&G=8")
    expect(page.get_by_role("heading", name="Decoding", exact=True)).to_be_visible(timeout=LOAD)
    idle(page)
    beam = page.get_by_role("radio", name="Beam search", exact=True)
    expect(beam).to_be_attached(timeout=LOAD)
    beam.check(force=True)
    expect(beam).to_be_checked(timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]strategy=beam(&|$)"), timeout=LOAD)
    tree = page.locator(".vega-embed").filter(has_text="The beams, step by step")
    expect(tree.locator("svg.marks")).to_be_visible(timeout=LOAD)
    expect(page.get_by_text("The continuations side by side")).to_be_visible()
    for name in ("Greedy", "Beam search", "Sampling", "Minimum Bayes risk"):
        expect(page.get_by_role("strong").filter(has_text=re.compile(f"^{name}$"))).to_be_visible()
    expect(page.get_by_text("(chosen)")).to_have_count(1)
    codes = page.locator('[data-testid="stCode"]')
    expect(codes).to_have_count(5)  # the prompt, then one continuation per strategy
    assert all(len(codes.nth(i).inner_text().strip()) > 0 for i in range(1, 5))
    no_exception(page)
