"""The Positional encoding page in a real browser: a link opens it on its curves, its maps say when
they scroll and the keyboard reaches them, the comparison's charts fit two to a row, and their colour
scales are drawn after the link changes."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import (
    LOAD, chart_scrolls, expect_whole_charts, idle, no_exception, page_in, still_box, visible_chart_scrolls,
)

pytestmark = pytest.mark.browser


def test_a_link_opens_the_positional_page_on_its_curves_and_back_undoes_a_change_of_tab(app_url, page):
    """/positional?tab=curves&dims=0,1,30,31 opens on those curves; another tab is a history step, which Back
    undoes."""
    page.goto(app_url + "/positional?E=64&nhead=4&tab=curves&dims=0,1,30,31")
    curves = page.get_by_role("tab", name="Dimensions as curves")
    expect(curves).to_have_attribute("aria-selected", "true", timeout=LOAD)
    dims = page.locator('[data-testid="stMultiSelect"]').filter(has_text="dimensions")
    for d in ("0", "1", "30", "31"):
        expect(dims.get_by_text(d, exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]E=64&.*&tab=curves&dims=0%2C1%2C30%2C31$"))
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="this link")).to_have_count(0)
    idle(page)
    page.get_by_role("tab", name="Sinusoidal vs learned").click()
    expect(page).to_have_url(re.compile(r"[?&]tab=compare&"), timeout=LOAD)
    page.go_back()
    expect(curves).to_have_attribute("aria-selected", "true", timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]tab=curves&"))
    no_exception(page)


def test_a_phone_says_the_positional_map_scrolls_to_its_colour_scale(app_url, browser):
    """At the default E = 16 the M x E map (460 px) scrolls sideways on a 390 px phone, its colour scale
    (what red and blue mean) out of sight with no scrollbar and no word about it; at E = 8 it fits, unsaid."""
    with page_in(browser, 390, 844) as page:
        page.goto(app_url + "/positional")
        heatmap = page.locator(".vega-embed").first
        expect(heatmap.locator(":scope > .marks")).to_be_visible(timeout=LOAD)
        chart_scrolls(page)  # so the page must say so
        expect(page.get_by_text("the map scrolls sideways inside its box: its last dimensions")).to_be_visible()
        page.goto(app_url + "/positional?E=8&nhead=2")
        expect(heatmap.locator(":scope > .marks")).to_be_visible(timeout=LOAD)
        still_box(heatmap.locator(":scope > .marks"), page)  # its final width, before it is measured
        assert not heatmap.evaluate("e => e.scrollWidth > e.clientWidth")
        expect(page.get_by_text("the map scrolls sideways inside its box")).to_have_count(0)
        no_exception(page)


def test_the_keyboard_reaches_and_scrolls_a_map_that_scrolls_sideways(app_url, browser):
    """At 390 px the positional map scrolls sideways, and its colour scale is out of sight. axe-core found
    that the keyboard could not reach it (scrollable-region-focusable): neither the map's box nor anything in
    it took the focus. Now Tab stops on it, with an outline, and the arrow keys scroll it to the scale; at 1280 px,
    where it fits, it adds no stop."""
    with page_in(browser, 390, 844) as page:
        page.goto(app_url + "/positional")
        box = page.locator(".vega-embed:visible").first
        expect(box.locator(":scope > .marks")).to_be_visible(timeout=LOAD)
        idle(page)
        expect(box).to_have_attribute("tabindex", "0")
        for _ in range(60):  # Tab from the top of the page until the map has the focus
            page.keyboard.press("Tab")
            if box.evaluate("e => e === document.activeElement"):
                break
        else:
            raise AssertionError("Tab never reached the map")
        assert box.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"
        assert box.evaluate("e => e.scrollLeft") == 0
        for _ in range(20):  # 40 px a press in Chromium; the map is 80 px wider than its box
            page.keyboard.press("ArrowRight")
        page.wait_for_function("e => e.scrollLeft > 0 && e.scrollLeft >= e.scrollWidth - e.clientWidth - 1",
                               arg=box.element_handle(), timeout=5000)
        no_exception(page)
    with page_in(browser, 1280, 800) as page:
        page.goto(app_url + "/positional")
        box = page.locator(".vega-embed:visible").first
        expect(box.locator(":scope > .marks")).to_be_visible(timeout=LOAD)
        idle(page)
        assert not visible_chart_scrolls(page, 0)
        expect(box).not_to_have_attribute("tabindex", "0")


@pytest.mark.parametrize("where,scrolling", [
    ("/attention?M=9&M_target=9", [0]),  # the weights, 306 px
    ("/positional?E=9&nhead=3", [0]),  # the M x E map, 298 px
    ("/positional?E=8&nhead=2&positional=learned", [0]),  # 296 px: its scale's labels read "−1.69"
    ("/positional?tab=compare", [0, 2]),  # the two tables, 304 and 322 px
])
def test_the_narrowest_phone_says_a_map_scrolls_to_its_colour_scale(app_url, browser, where, scrolling):
    """These maps fit the 328 px column of a 360 px phone, where nothing is said, but not the 288 px one of a
    320 px phone (an iPhone SE's), where they scrolled sideways unsaid: their colour scales' labels were cut
    at the screen's edge (in the comparison "valu" and "−" of "−1.69"). There, and only there, the page
    says that they scroll."""
    said = '[data-testid="stCaptionContainer"]:visible'
    for width, height in ((320, 568), (360, 740)):
        with page_in(browser, width, height) as page:
            page.goto(app_url + where)
            expect(page.locator(".vega-embed:visible > .marks").first).to_be_visible(timeout=LOAD)
            idle(page)
            for nth in scrolling:
                assert visible_chart_scrolls(page, nth) == (width < 350), (width, nth)
            expect(page.locator(said, has_text="scrolls sideways inside its box")).to_have_count(int(width < 350))
            no_exception(page)


def test_positional_comparison_charts_fit_two_to_a_row(app_url, laptop):
    """The "Sinusoidal vs learned" tab draws two heatmaps side by side for each kind; at 64 positions
    and dimensions each must still show whole in its half of the window."""
    page = laptop
    page.goto(app_url + "/positional?M=64&M_target=64&E=64&nhead=2")
    expect(page.locator(".vega-embed").first.locator(":scope > .marks")).to_be_visible(timeout=LOAD)
    page.get_by_role("tab", name="Sinusoidal vs learned").click()
    expect_whole_charts(page.locator(".vega-embed:visible"), 4)  # table and similarity, for each kind
    no_exception(page)


def gradient_pixels(chart) -> int:
    """How many pixels of a chart's colour-scale bar are drawn in colour, not the page's own ground."""
    from io import BytesIO

    from PIL import Image

    bar = chart.locator(".role-legend-gradient").first
    image = Image.open(BytesIO(bar.screenshot())).convert("RGB")
    return sum(count for count, (r, g, b) in image.getcolors(1 << 24) if max(r, g, b) - min(r, g, b) > 40)


def test_a_colour_scale_is_drawn_after_the_link_changes(app_url, laptop):
    """Vega names a colour scale's gradient by the page's address when the chart was drawn, and a tab
    changes the address: after a look at the curves, every colour bar on the Compare tab, drawn at
    ?tab=table, was blank (ui.look.charts.drawn_at_this_link). Each gradient now names the page's present
    address, and shows. (Straight from the first tab the bars showed: the browser found each gradient
    while the address still read tab=table, and kept it.)"""
    page = laptop
    page.goto(app_url + "/positional")
    expect(page.locator(".vega-embed").first.locator(":scope > .marks")).to_be_visible(timeout=LOAD)
    page.get_by_role("tab", name="Dimensions as curves").click()
    expect(page).to_have_url(re.compile("tab=curves"), timeout=LOAD)
    idle(page)
    page.get_by_role("tab", name="Sinusoidal vs learned").click()
    expect(page).to_have_url(re.compile("tab=compare"), timeout=LOAD)
    idle(page)
    charts = page.locator(".vega-embed:visible")
    expect(charts).to_have_count(4, timeout=LOAD)
    page.wait_for_timeout(500)  # the charts' paint after the run
    fills = page.evaluate("""() => [...document.querySelectorAll('.vega-embed .role-legend-gradient [fill^="url("]')]
        .filter(e => e.closest('.vega-embed').offsetParent !== null).map(e => e.getAttribute('fill'))""")
    here = page.url.split("#")[0]
    assert len(fills) == 4 and all(f.startswith(f"url({here}#") for f in fills), (here, fills)
    for chart in charts.all():
        chart.scroll_into_view_if_needed()
        assert gradient_pixels(chart) > 200
    no_exception(page)


def test_a_rope_link_opens_on_the_rotation_and_measures_the_relative_property(app_url, page):
    """?positional=rope opens on RoPE's tab: its angles drawn, no parameters, and a new shift s still gives
    the same score."""
    page.goto(app_url + "/positional?arch=decoder-only&nhead=4&nhead_kv=2&positional=rope")
    rope = page.get_by_role("tab", name="RoPE rotation")
    expect(rope).to_have_attribute("aria-selected", "true", timeout=LOAD)
    expect(page.get_by_text("RoPE has no parameters: this model's positional parameters number 0")).to_be_visible()
    expect(page.locator(".vega-embed").first.locator(":scope > .marks")).to_be_visible(timeout=LOAD)
    expect(page.get_by_text("Same score.")).to_be_visible()
    idle(page)
    shift = page.get_by_label("s — shift (0 to 100,000)")
    shift.fill("300")
    shift.press("Enter")
    expect(page.locator('[data-testid="stTable"]').filter(has_text="(i + s, j + s)").get_by_text(
        "305", exact=True)).to_be_visible(timeout=LOAD)  # the query now at i + s = 5 + 300
    expect(page.get_by_text("Same score.")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]positional=rope&.*tab=rope.*&i=5&j=2&s=300$"))  # shareable as seen
    no_exception(page)
