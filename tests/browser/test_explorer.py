"""The Explorer page in a real browser: the architecture figure, the glossary, the table's descriptions
and the figures above it read whole from a phone to a projector, a phone says where the sliders are,
and its charts keep their plots."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import (LOAD, idle, no_exception, page_in, settled_box, shape_cell, slider, slider_thumb,
                                   still_box)
from tests.support.browser_app import plot_height

pytestmark = pytest.mark.browser


def test_the_architecture_figure_scrolls_inside_a_phone_screen_at_a_readable_size(app_url, phone):
    """Scaled to a phone's column the figure's labels would be 4 px high. It keeps 640 px (labels
    of 8.4 px or more) and scrolls sideways in its own box; the page does not."""
    page = phone
    page.goto(app_url)
    figure = page.get_by_role("img", name=re.compile("^The Transformer: one of its"))
    expect(figure).to_be_visible(timeout=LOAD)
    no_exception(page)
    # On a server's first page the figure can be measured before the page's styles reach it: wait until it settles.
    page.wait_for_function("e => e.getBoundingClientRect().width >= 640", arg=figure.element_handle(), timeout=LOAD)
    width = page.evaluate("document.documentElement.clientWidth")
    box = figure.bounding_box()
    assert box["width"] >= 640 > width and box["x"] + box["width"] > width
    page.locator(".st-key-architecture").evaluate("e => { e.scrollLeft = e.scrollWidth; }")  # its own box
    box = figure.bounding_box()
    assert width / 2 < box["x"] + box["width"] <= width  # its right edge now on screen
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_the_architecture_figure_shows_whole_beside_the_sidebar_on_a_projector_screen(app_url, browser):
    """At 1024 x 768 with the sidebar open the column is 564 px and the figure 640: its box cut it off
    at the decoder's residual labels, and the positional encoding on the right was out of sight. It
    now reaches into the page's margin and shows whole, at 640 px (labels of 8.4 px) or more; and
    Streamlit's fullscreen button shows it larger still, whole in the window."""
    with page_in(browser, 1024, 768) as page:
        page.goto(app_url)
        figure = page.get_by_role("img", name=re.compile("^The Transformer: one of its"))
        expect(figure).to_be_visible(timeout=LOAD)
        expect(page.locator('[data-testid="stSidebarContent"]')).to_be_in_viewport()  # the sidebar is open
        figure.scroll_into_view_if_needed()
        box, frame = figure.bounding_box(), page.locator(".st-key-architecture").bounding_box()
        sidebar = page.locator('[data-testid="stSidebar"]').bounding_box()
        assert box["width"] >= 640
        assert sidebar["x"] + sidebar["width"] <= frame["x"] <= box["x"]  # nothing hidden under the sidebar
        assert box["x"] + box["width"] <= frame["x"] + frame["width"] <= 1024  # nor past its box's right edge
        assert page.evaluate("document.documentElement.scrollWidth") <= 1024

        figure.hover()
        page.get_by_role("button", name=re.compile("^Fullscreen: The Transformer")).click()
        expect(page.get_by_role("button", name="Close fullscreen")).to_be_visible()
        full = settled_box(figure, page, changed_from=box)  # after the figure's resize to the window
        assert full["width"] > box["width"] + 50  # larger on the screen: 710 px against 640
        assert full["x"] >= 0 and full["x"] + full["width"] <= 1024 and full["y"] + full["height"] <= 768
        no_exception(page)


@pytest.mark.parametrize("width,height,touch", [(1280, 800, False), (390, 844, True)])
def test_the_figures_fullscreen_button_takes_a_click_on_a_laptop_and_a_tap_on_a_phone(app_url, browser, width,
                                                                                     height, touch):
    """The button sat 44 px above the figure, in the box that scrolls it sideways, which clipped it: the
    caption above took its clicks and taps, and the caption's own advice ("press the fullscreen button")
    led nowhere. A phone is a touch screen here: Streamlit moves the toolbar again while it is tapped."""
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=touch, is_mobile=touch)
    try:
        page = context.new_page()
        page.goto(app_url)
        figure = page.get_by_role("img", name=re.compile("^The Transformer: one of its"))
        expect(figure).to_be_visible(timeout=LOAD)
        idle(page)  # the page's style for the figure has come: its scrolling box is what clipped the button
        page.wait_for_function("getComputedStyle(document.querySelector('.st-key-architecture')).overflowX === 'auto'")
        # The figure's top 300 px down, its caption above it in view, as a reader scrolling down meets it.
        figure.evaluate("f => { const main = f.closest('[data-testid=\"stMain\"]');"
                        " main.scrollTop += f.getBoundingClientRect().top - 300; }")
        button = page.get_by_role("button", name=re.compile("^Fullscreen: The Transformer"))
        if touch:
            figure.tap(position={"x": 40, "y": 40})  # a tap shows the toolbar, as a pointer over it does
        else:
            figure.hover(position={"x": 40, "y": 40})
        expect(button).to_be_visible()
        still_box(button, page)  # Streamlit slides the toolbar up to its place: the clipping came at the end
        # What a pointer at the button's middle meets: before, the caption above it.
        assert button.evaluate("b => { const r = b.getBoundingClientRect(); return b.contains("
                               "document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)); }")
        if touch:
            button.tap(timeout=5000)  # fails when another element would take the tap
        else:
            button.click(timeout=5000)
        expect(page.get_by_role("button", name="Close fullscreen")).to_be_visible()
        no_exception(page)
    finally:
        context.close()


@pytest.mark.parametrize("width,height", [(390, 844), (360, 740), (320, 568), (1280, 800)])
def test_the_glossary_reads_whole_on_a_phone(app_url, browser, width, height):
    """The glossary's table was 365 px wide in a 294 px (360 px phone) or 324 px (390 px) box: its
    meaning column, what a learner opens it for, was cut at the screen's edge. PyTorch's long names
    may break on a phone now; a laptop's table is as it was. On a 320 px phone it was still 294 px in a
    254 px box: there its type is 14 px, and a name of the learner's notation is still never broken."""
    with page_in(browser, width, height) as page:
        page.goto(app_url)
        expect(shape_cell(page, 0)).to_have_text("(2, 8)", timeout=LOAD)
        idle(page)
        glossary = page.locator(".st-key-glossary")
        glossary.locator("summary").click()
        table = glossary.locator("table")
        expect(table).to_be_visible()
        box = table.evaluate("t => [t.parentElement.scrollWidth, t.parentElement.clientWidth]")
        assert box[0] <= box[1]
        assert table.bounding_box()["x"] + table.bounding_box()["width"] <= width
        meaning = glossary.get_by_text("distinct token ids").bounding_box()
        assert meaning["x"] + meaning["width"] <= width  # the last column is on screen
        lines = table.evaluate("t => [...t.querySelectorAll('td:first-child')].map(c => { const r = "
                               "document.createRange(); r.selectNodeContents(c); return [c.innerText, "
                               "new Set([...r.getClientRects()].map(b => Math.round(b.top))).size]; })")
        assert all(n == 1 for name, n in lines if " " not in name), lines  # "vocab_size" on one line
        size = table.evaluate("t => getComputedStyle(t.querySelector('td')).fontSize")
        assert size == ("14px" if width < 350 else "16px")  # a 360 px phone's and a laptop's as they were
        no_exception(page)


def test_where_the_sidebar_starts_closed_the_explorer_says_how_to_open_it(app_url, browser):
    """The explorer says "move a slider in the sidebar"; on a phone Streamlit starts the sidebar closed
    and a newcomer saw no sidebar, only an unlabelled » in the corner. With it open, at 1280 px, the
    hint is not shown."""
    hint = "The sliders are in the sidebar, closed on a screen this narrow"
    with page_in(browser, 390, 844) as page:
        page.goto(app_url)
        expect(page.get_by_text(hint)).to_be_visible(timeout=LOAD)
        opener = page.locator('[data-testid="stExpandSidebarButton"]')
        box = opener.bounding_box()
        assert box["x"] < 60 and box["y"] < 60  # at the top left, as the hint says
        opener.click()
        expect(slider(page, "M — source length")).to_be_in_viewport()
        no_exception(page)
    with page_in(browser, 1280, 800) as page:
        page.goto(app_url)
        expect(shape_cell(page, 0)).to_have_text("(2, 8)", timeout=LOAD)
        idle(page)
        expect(page.get_by_text(hint)).not_to_be_visible()


def test_the_explorers_descriptions_read_whole_on_a_laptop_screen(app_url, laptop):
    """At 1280 x 800 with the sidebar open a description showed its first 25 or so characters: one line of a
    400 px column, its second half past the edge of the 818 px table. Its text now wraps in rows three lines
    high, and each table, the description its last column, fits its box: nothing is left to scroll to, in
    the 14 rows or in the extras' narrower expander. Row 6's, too long for three lines, says where the rest is."""
    page = laptop
    page.goto(app_url + "/explorer")
    expect(shape_cell(page, 0)).to_have_text("(2, 8)", timeout=LOAD)
    idle(page)
    page.get_by_text("More tensors (").click()
    tables = page.locator('[data-testid="stDataFrame"]')
    expect(tables).to_have_count(2)
    for i in range(2):
        scroller = tables.nth(i).locator(".dvn-scroller")  # the grid's scrolling box
        expect(scroller).to_be_visible(timeout=LOAD)
        page.wait_for_function("e => e.clientWidth > 700 && e.scrollWidth <= e.clientWidth",
                               arg=scroller.element_handle(), timeout=10_000)
    row6 = tables.first.locator('[data-testid="glide-cell-6-5"]')  # description, row 6
    expect(row6).to_have_text(re.compile(r"takes from each key\. \(more in “Read a row whole”\)$"))
    no_exception(page)


@pytest.mark.parametrize("query", ["", "?N=64&M=4096&M_target=4096&E=12288&nhead=128&vocab_size=65536&layers=96"])
def test_the_explorers_figures_keep_their_units_on_a_tablet(app_url, browser, query):
    """In four equal columns a 1024 px window cut "164.0 KiB" to "164.0 …", and at the largest sizes
    every figure lost its unit ("408.3 …"): each figure now takes its own width, and the row wraps."""
    with page_in(browser, 1024, 768) as page:
        page.goto(app_url + "/explorer" + query)
        figures = page.locator('[data-testid="stMetric"]')
        expect(figures).to_have_count(4, timeout=LOAD)
        expect(figures.nth(1)).to_contain_text("billion" if query else "20,260")
        no_exception(page)
        for i in range(4):
            cut = figures.nth(i).evaluate("e => [...e.querySelectorAll('*')]"
                                          ".filter(x => x.scrollWidth > x.clientWidth + 1).map(x => x.textContent)")
            assert not cut, cut


@pytest.mark.parametrize("where,tab,chart,width,height", [
    ("/", "Memory against M", "memory", 360, 740),
    ("/?positional=learned", "Memory against M", "memory", 360, 740),  # longer label
    ("/", "Memory against M", "memory", 320, 568),
    ("/?positional=learned", "Memory against M", "memory", 320, 568),
    ("/positional", "Dimensions as curves", "curves", 360, 740),
])
def test_a_legend_below_a_chart_does_not_take_its_plot_height(app_url, browser, where, tab, chart, width,
                                                               height):
    """A chart as wide as its column keeps its plot's height, and its axes and legend come on top:
    drawn with Streamlit's default sizing, the memory chart's four-line legend left its plot about
    110 px of 340 on a phone and on a laptop alike, and the curves' legend did the same to them.
    Every legend label ends inside the chart: on a 360 px phone the curves' legend, four to a row,
    cut its fourth label to "dim", and the memory chart's longest label lost its last letters. On a
    320 px phone two memory labels (three with a learned table) ran up to 36 px past the chart's edge:
    there their brackets take a second line (render.tables.LEGEND_LINES); on a 360 px phone each keeps one."""
    plot = plot_height(chart, learned="learned" in where)
    with page_in(browser, width, height) as page:
        page.goto(app_url + where)
        page.get_by_role("tab", name=tab).click(timeout=LOAD)
        drawing = page.locator(".vega-embed:visible").last.locator(":scope > .marks")
        expect(drawing).to_be_visible(timeout=LOAD)
        no_exception(page)
        # The x axis and its title take about 50 px, and every legend here has two rows or more.
        assert drawing.bounding_box()["height"] >= plot + 90
        drawn = page.locator(".vega-embed:visible").last
        box = drawn.bounding_box()
        labels = drawn.evaluate("""e => [...e.querySelectorAll('.role-legend-label text')]
            .map(t => [t.textContent, t.getBoundingClientRect().right, t.querySelectorAll('tspan').length])""")
        assert len(labels) >= 4 and all(right <= box["x"] + box["width"] for _, right, _ in labels), (labels, box)
        if chart == "memory":  # two lines at 320 px, where one would not fit; one at 360 px
            assert any(lines for _, _, lines in labels) == (width < 350), labels




def test_a_decoder_only_models_kv_cache_section_grows_with_g_and_its_live_check_passes(app_url, laptop):
    """The KV-cache section of a decoder-only link: the cache's shape, its chart with MHA, GQA, MQA, MLA and a
    window and the chosen config marked, and the live check; a step of the G slider grows the cache by those tokens."""
    page = laptop
    page.goto(app_url + "/explorer?arch=decoder-only&N=2&M=8&E=16&nhead=4&nhead_kv=2&positional=rope&norm=rmsnorm"
              "&activation=swiglu&norm_first=true&bias=false")
    section = page.locator(".st-key-kv_cache")
    expect(section.get_by_text("(layers, 2, N, nhead_kv, M + G, d_k) = (2, 2, 2, 2, 16, 4)")).to_be_visible(
        timeout=LOAD)
    expect(section.get_by_text(re.compile(r"^Live check: 8 tokens generated with the cache"))).to_be_visible()
    chart = section.locator(".vega-embed")
    expect(chart.locator(":scope > .marks")).to_be_visible(timeout=LOAD)
    labels = chart.evaluate("e => [...e.querySelectorAll('.role-legend-label text')].map(t => t.textContent)")
    assert labels == ["MHA (nhead_kv = 4)", "GQA (nhead_kv = 2)", "MQA (nhead_kv = 1)",
                      "MLA (kv_lora_rank + rope_head_dim = 16 + 2, DeepSeek-V2's ratios to d_k)",
                      "window W = 4,096 (nhead_kv = 2)"], labels
    marks = chart.evaluate("e => [...e.querySelectorAll('.role-mark text')].map(t => t.textContent)")
    assert "yours: 4.0 KiB" in marks, marks  # said on the chart beside the ring, not only in a tooltip
    no_exception(page)
    idle(page)
    slider_thumb(page, "G — generated tokens").press("ArrowRight")  # 8 -> 16 new tokens
    expect(section.get_by_text("(layers, 2, N, nhead_kv, M + G, d_k) = (2, 2, 2, 2, 24, 4)")).to_be_visible(
        timeout=LOAD)
    expect(section.get_by_text(re.compile(r"^Live check: 16 tokens generated with the cache"))).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]G=16(&|$)"))  # a link to this page opens the cache at this length
    no_exception(page)


def test_the_table_downloads_as_csv_under_a_name_with_its_sizes(app_url, laptop):
    """The file is written when the button is clicked (a callable's data), not on every run."""
    from core import DEFAULT, trace
    from render.tables import table_csv, table_file_name

    page = laptop
    page.goto(app_url)
    expect(shape_cell(page, 0)).to_have_text("(2, 8)", timeout=LOAD)
    idle(page)
    with page.expect_download(timeout=LOAD) as download:
        page.get_by_role("button", name="Download CSV").click()
    assert download.value.suggested_filename == table_file_name(DEFAULT, "csv")
    with open(download.value.path()) as saved:
        assert saved.read() == table_csv(trace(DEFAULT))
