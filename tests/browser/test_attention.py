"""The Attention page in a real browser: a link opens it on its view, the heatmap's numbers are a real
table, the maps show whole (or say that they scroll) from the narrowest phone to a projector's
fullscreen, and a model over the memory budget still gets its maps."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import (
    LOAD, chart_scrolls, expect_whole_charts, idle, no_exception, page_in, settled_box, slider_thumb, still_box, thumb_value,
    visible_chart_scrolls,
)

pytestmark = pytest.mark.browser


def test_a_link_opens_the_attention_page_on_its_view_and_back_undoes_a_change_of_view(app_url, page):
    """A lesson on masking sends a link that opens on the decoder's masked self-attention at a given layer,
    head and batch item. A change of view is a step in the history like a slider's: Back returns to the
    view before it, and Back past a slider move keeps the view."""
    page.goto(app_url + "/attention?layers=3&E=16&nhead=4&kind=decoder-masked&layer=2&head=3&item=0")
    masked = page.get_by_role("radio", name="decoder masked self-attention", exact=True)
    expect(masked).to_be_checked(timeout=LOAD)
    choice = page.locator('[data-testid="stSelectbox"]')
    for label, value in (("layer", "2"), ("head", "3"), ("batch item", "0")):
        expect(choice.filter(has_text=label).get_by_role("combobox")).to_have_value(value)
    causal = page.get_by_text("Causal mask: True above the diagonal")
    expect(causal).to_be_visible(timeout=LOAD)
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="this link")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"/attention\?N=2&.*&layers=3&.*&kind=decoder-masked&layer=2&head=3&item=0$"))

    idle(page)
    page.get_by_role("radio", name="cross-attention", exact=True).check(force=True)
    expect(page).to_have_url(re.compile(r"[?&]kind=cross&layer=2&head=3&item=0$"), timeout=LOAD)
    expect(page.get_by_text("Target queries look at source keys")).to_be_visible(timeout=LOAD)
    page.go_back()
    expect(masked).to_be_checked(timeout=LOAD)
    expect(causal).to_be_visible(timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]kind=decoder-masked&layer=2&"))

    idle(page)
    thumb = slider_thumb(page, "N — batch size")
    thumb.focus()
    thumb.press("ArrowRight")  # N = 3, on the masked view
    expect(page).to_have_url(re.compile(r"[?&]N=3&.*kind=decoder-masked&layer=2&head=3&item=0$"), timeout=LOAD)
    page.go_back()
    expect(thumb_value(page, "N — batch size")).to_have_text("2", timeout=LOAD)
    expect(masked).to_be_checked()
    expect(choice.filter(has_text="layer").get_by_role("combobox")).to_have_value("2")
    no_exception(page)


def test_the_heatmap_numbers_are_a_table_a_screen_reader_can_read(app_url, page):
    """The chart is a picture to assistive technology; the table under it has real cells, each
    with its query row and key column named."""
    page.goto(app_url + "/attention")
    page.get_by_text("The numbers behind the heatmap").click()
    table = page.get_by_role("table")
    expect(table.get_by_role("rowheader", name="query 7", exact=True)).to_be_visible(timeout=LOAD)
    expect(table.get_by_role("columnheader", name="key 7", exact=True)).to_be_visible()
    expect(table.get_by_role("cell")).to_have_count(64)  # 8 queries x 8 keys at the default config
    no_exception(page)


def test_a_wide_heatmap_scrolls_inside_a_phone_screen(app_url, phone):
    """On a phone, a 64-position heatmap (520 px with axes and legend) is wider than the column.
    Every column, and the colour scale on the right, must still be reachable: the chart scrolls
    sideways in its own box, and the page itself does not scroll sideways."""
    page = phone
    page.goto(app_url + "/attention?M=64&M_target=64")
    charts = page.locator(".vega-embed")
    expect(charts).to_have_count(2, timeout=LOAD)  # the weights, then the mask
    no_exception(page)
    # A phone draws no scrollbar until one scrolls, so the page says that the map scrolls.
    expect(page.get_by_text("the map scrolls sideways inside its box")).to_be_visible()
    width = page.evaluate("document.documentElement.clientWidth")
    for i in range(2):  # here Streamlit draws the weights as SVG and the mask on a canvas: both count
        chart, drawing = charts.nth(i), charts.nth(i).locator(":scope > .marks")  # .marks: the svg or canvas
        expect(drawing).to_be_visible(timeout=LOAD)
        chart_scrolls(page, i)  # once it has its width: a scroll set before went nowhere in one CI run
        box = drawing.bounding_box()
        assert box["x"] + box["width"] > width  # wider than the screen
        chart.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
        box = drawing.bounding_box()
        assert width / 2 < box["x"] + box["width"] <= width  # its right edge, legend and all, on screen
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # the page never scrolls sideways


@pytest.mark.parametrize("width,height", [(390, 844), (360, 740)])
def test_a_phone_says_a_map_and_its_numbers_scroll_sideways(app_url, browser, width, height):
    """At M = 12 the weights map (380 px) scrolls sideways on these phones, but the caption that says so
    came only above 388 px, a 420 px phone's column; its numbers' table scrolled unsaid, its edge
    between two columns (key 4 looked last of 8 at the default M)."""
    with page_in(browser, width, height) as page:
        page.goto(app_url + "/attention?M=12&M_target=12")
        weights = page.locator(".vega-embed").first
        expect(weights.locator(":scope > .marks")).to_be_visible(timeout=LOAD)
        chart_scrolls(page)  # so the page must say so
        expect(page.get_by_text("the map scrolls sideways inside its box")).to_be_visible()
        page.get_by_text("The numbers behind the heatmap").click()  # their table scrolls too, and says so
        expect(page.get_by_text("A wide table scrolls sideways: swipe it for every column.")).to_be_visible()
        no_exception(page)


@pytest.mark.parametrize("where", ["/positional", "/attention?M=16&M_target=16"])
def test_a_laptop_is_not_told_that_a_map_it_shows_whole_scrolls(app_url, browser, where):
    """These maps (438 and 452 px) are wider than a phone's column, and the caption that says they scroll
    sideways showed on a laptop too, where each fits its 820 px column with room to spare. It now shows
    only where the box is narrower than the map (a CSS container query): not at 1280 or 768 px, still at
    390 px, and where hidden it leaves no gap above the map."""
    said = '[data-testid="stCaptionContainer"]:visible'
    for width, height in ((1280, 800), (768, 1024), (390, 844)):
        with page_in(browser, width, height) as page:
            page.goto(app_url + where)
            expect(page.locator(".vega-embed:visible > .marks").first).to_be_visible(timeout=LOAD)
            idle(page)
            scrolls = visible_chart_scrolls(page, 0)
            assert scrolls == (width == 390), (width, scrolls)
            expect(page.locator(said, has_text="scrolls sideways inside its box")).to_have_count(int(scrolls))
            if not scrolls:  # the hidden caption's place: the box starts where the map does
                box = page.locator('[class*="st-key-map_box_"]').first.bounding_box()
                top = page.locator(".vega-embed:visible").first.bounding_box()["y"]
                assert box["y"] <= top and (where != "/positional" or abs(box["y"] - top) < 1), (box, top)
            no_exception(page)


def test_the_default_attention_map_fits_the_narrowest_phone_unsaid(app_url, browser):
    """At the default M = 8 the weights (286 px) fit a 320 px phone's 288 px column: no word of scrolling."""
    with page_in(browser, 320, 568) as page:
        page.goto(app_url + "/attention")
        expect(page.locator(".vega-embed:visible > .marks").first).to_be_visible(timeout=LOAD)
        idle(page)
        assert not visible_chart_scrolls(page, 0) and not visible_chart_scrolls(page, 1)
        expect(page.locator('[data-testid="stCaptionContainer"]:visible',
                            has_text="scrolls sideways inside its box")).to_have_count(0)
        no_exception(page)


def test_a_model_over_the_budget_gets_its_attention_maps_from_a_slim_pass(app_url, laptop):
    """The paper's big model (838 MiB for a whole pass) opened on its deepest cross-attention: the
    page says it ran a slim pass, and both heatmaps are drawn whole, where it once had no values."""
    page = laptop
    page.goto(app_url + "/attention?N=1&M=16&E=1024&nhead=16&vocab_size=37000&layers=6&d_ff=4096"
              "&tie_embeddings=true&kind=cross&layer=5&head=15")
    expect(page.get_by_text("A slim pass.")).to_be_visible(timeout=LOAD)
    expect(page.get_by_text("No values to draw")).to_have_count(0)
    expect_whole_charts(page.locator(".vega-embed"), 2)
    no_exception(page)


@pytest.mark.parametrize("M", [8, 12, 29, 30, 64])  # 29 and 30 straddle the switch to stacked charts
def test_attention_charts_fit_their_columns_on_a_laptop_screen(app_url, laptop, M):
    """Both heatmaps show whole, at map sizes on either side of each switch: the mask goes below the
    weights when it would not fit beside them (it used to be cut off there, its last keys, where
    the padding is, out of sight)."""
    page = laptop
    page.goto(app_url + f"/attention?M={M}&M_target={M}")
    expect_whole_charts(page.locator(".vega-embed"), 2)
    no_exception(page)


@pytest.mark.parametrize("width,height", [(1024, 768), (768, 1024)])
def test_attention_charts_show_whole_on_a_tablet(app_url, browser, width, height):
    """At 1024 px with the sidebar open the main area is narrower than a laptop's; with columns of a
    fixed share the mask was cut off after key 7, its padding keys 9-11 out of sight. The two
    charts now wrap below each other where they do not fit side by side."""
    with page_in(browser, width, height) as page:
        page.goto(app_url + "/attention?N=2&M=12&M_target=12&E=16&nhead=2&vocab_size=100")
        expect_whole_charts(page.locator(".vega-embed"), 2)
        no_exception(page)


def test_the_default_mask_sits_beside_its_weights_on_a_tablet(app_url, browser):
    """At the default M = 8, a 1024 px window with the sidebar open has room for both heatmaps in
    one row; the boxes around them used to be wider than the charts and sent the mask below."""
    with page_in(browser, 1024, 768) as page:
        page.goto(app_url + "/attention")
        charts = page.locator(".vega-embed")
        expect_whole_charts(charts, 2)
        weights, mask = (charts.nth(i).bounding_box() for i in range(2))
        assert mask["y"] == weights["y"] and mask["x"] >= weights["x"] + weights["width"]
        no_exception(page)


@pytest.mark.parametrize("where,columns,row,column", [("/attention", 8, "query", "key"),
                                                      ("/positional", 16, "position", "dimension")])
def test_a_heatmap_in_fullscreen_shows_whole_and_larger_on_a_projector_screen(app_url, browser, where, columns, row,
                                                                              column):
    """On a projector a heatmap's 20 px cells are small, and Streamlit's fullscreen button is the way to
    enlarge one; but it drew the cells as large as the window and the axes and colour scale past its
    edges (the weights map 1126 x 787 px in a 1024 x 768 window). It now fits the window whole, each cell
    at least four times its area on the page (7 to 17 times here), and a cell's tooltip names that cell."""
    with page_in(browser, 1024, 768) as page:
        page.goto(app_url + where)
        chart = page.locator('[data-testid="stVegaLiteChart"]').first
        drawing = chart.locator(":scope > svg.marks")
        expect(drawing).to_be_visible(timeout=LOAD)
        idle(page)
        cell = chart.locator(".mark-rect path").nth(5 * columns + 2)  # row 5, column 2
        # The map sits below the text box: bring it, and the toolbar above it, into the window first.
        chart.evaluate("e => e.scrollIntoView({block: 'center'})")
        inline, inline_drawing = cell.bounding_box(), drawing.bounding_box()
        chart.hover()
        frame = chart.locator("xpath=ancestor::*[@data-testid='stFullScreenFrame'][1]")
        # Clicked where a hand clicks it: Playwright's own click checks the point first, and the map's tooltip,
        # which follows the pointer, can be drawn there for a moment on a loaded machine.
        button = still_box(frame.get_by_role("button", name="Fullscreen"), page)  # the toolbar slides in on hover
        page.mouse.move(button["x"] + button["width"] / 2, button["y"] + button["height"] / 2)
        page.mouse.down()
        page.mouse.up()
        expect(frame.get_by_role("button", name="Close fullscreen")).to_be_visible()
        full = settled_box(drawing, page, changed_from=inline_drawing)  # redrawn at the window's size
        assert full["x"] >= 0 and full["y"] >= 0, full
        assert full["x"] + full["width"] <= 1024 and full["y"] + full["height"] <= 768, full  # axes and legend too
        large = cell.bounding_box()
        assert large["width"] * large["height"] >= 4 * inline["width"] * inline["height"], (large, inline)
        page.mouse.move(large["x"] + large["width"] / 2, large["y"] + large["height"] / 2)
        expect(page.locator("#vg-tooltip-element")).to_contain_text(re.compile(rf"{row}\s*5\s*{column}\s*2\D"))
        no_exception(page)


def svg_texts(chart, role: str) -> list[dict]:
    """The text, box and centre of each text element of one role ("axis-title", "axis-label") in an
    SVG chart, in page pixels."""
    return chart.evaluate(f"""e => [...e.querySelectorAll('svg.marks g.role-{role} text')].map(t => {{
        const r = t.getBoundingClientRect();
        return {{text: t.textContent, x: r.x, y: r.y, right: r.right, bottom: r.bottom, mid: r.y + r.height / 2}};
    }})""")


@pytest.mark.parametrize("where", ["/attention?M=1&M_target=1", "/attention?M=5&M_target=5",
                                   "/positional?M=1&M_target=1&E=1&nhead=1"])
def test_small_heatmaps_keep_their_titles_apart_and_labels_on_their_rows(app_url, laptop, where):
    """Beside a few rows the query axis title (180 px) ran down into the key axis title, and the
    label of row 0 hung half a line below its row (labelFlush). At E = 1, M = 1 the positional
    scale's middle lay outside its domain and Vega warned about it in the console."""
    page = laptop
    warnings: list[str] = []
    page.on("console", lambda message: warnings.append(message.text))
    page.goto(app_url + where)
    chart = page.locator(".vega-embed").first
    expect(chart.locator("svg.marks")).to_be_visible(timeout=LOAD)
    page.wait_for_timeout(500)
    no_exception(page)
    x_title, y_title = svg_texts(chart, "axis-title")  # Vega draws the x axis first
    assert y_title["bottom"] < x_title["y"] or y_title["right"] < x_title["x"], (y_title, x_title)
    # The y axis's labels are those at one x, down the left; their spacing is the rows' own.
    labels = svg_texts(chart, "axis-label")
    left = min(label["x"] for label in labels)
    rows = sorted(label["mid"] for label in labels if abs(label["x"] - left) < 2)
    if len(rows) > 2:
        steps = [b - a for a, b in zip(rows, rows[1:])]
        assert max(steps) - min(steps) <= 1, steps  # row 0's label as far from row 1's as the others
    assert not [w for w in warnings if "WARN" in w], warnings[:5]


def test_a_decoder_only_gqa_link_draws_the_causal_map_and_the_shared_kv_heads(app_url, page):
    """?arch=decoder-only&nhead=4&nhead_kv=2: one attention, nothing to choose, its causal mask beside the
    weights, and the row of query heads labelled with the K/V head each reads."""
    page.goto(app_url + "/attention?arch=decoder-only&nhead=4&nhead_kv=2&positional=rope")
    expect(page.get_by_text("Causal self-attention", exact=False).first).to_be_visible(timeout=LOAD)
    expect(page.get_by_role("radio")).to_have_count(0)  # one attention: no kind to choose
    expect(page.get_by_text("Causal mask: True above the diagonal, so position i sees")).to_be_visible()
    expect(page.get_by_text("Grouped-query attention (GQA): nhead = 4 query heads, nhead_kv = 2")).to_be_visible()
    groups = page.locator('[data-testid="stTable"]').last
    expect(groups.get_by_text("0 and 1", exact=True)).to_be_visible()
    expect(groups.get_by_text("2 and 3", exact=True)).to_be_visible()
    expect(page.locator(".vega-embed")).to_have_count(3, timeout=LOAD)  # weights, mask, heads
    expect(page).to_have_url(re.compile(r"[?&]arch=decoder-only&.*[?&]kind=causal&"))
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="this link")).to_have_count(0)
    no_exception(page)


def test_a_windowed_link_draws_the_band_mask_and_a_windowed_and_a_full_layer_side_by_side(app_url, laptop):
    """?window=3&global_every=2: layer 0 attends through a band of 3 keys, layer 1 in full. The mask beside the
    weights is the band, and under them the two layers' maps stand side by side, each labelled."""
    laptop.goto(app_url + "/attention?arch=decoder-only&nhead=4&nhead_kv=2&positional=rope&layers=4&window=3"
                "&global_every=2&layer=0")
    expect(laptop.get_by_text("Sliding-window mask, W = 3: True where blocked.")).to_be_visible(timeout=LOAD)
    expect(laptop.get_by_role("heading", name="A windowed and a full layer")).to_be_visible()
    windowed = laptop.get_by_role("heading", name="Layer 0, windowed")
    full = laptop.get_by_role("heading", name="Layer 1, full")
    expect(windowed).to_be_visible()
    expect(full).to_be_visible()
    expect(laptop.locator(".vega-embed")).to_have_count(5, timeout=LOAD)  # weights, mask, the pair, the K/V heads
    left, right = windowed.bounding_box(), full.bounding_box()
    assert abs(left["y"] - right["y"]) < 2 and left["x"] + left["width"] <= right["x"]  # side by side on a laptop
    expect(laptop.locator('[data-testid="stAlert"]').filter(has_text="this link")).to_have_count(0)
    no_exception(laptop)
