"""The Training lab in a real browser: a link opens it without the mask, a run goes on while the
learner looks elsewhere and a closed tab's run gives its slot back, the language model trains without
Vega warnings, and the lab's sliders and dashed lines read on a laptop and a dark phone."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from tests.support.browser import LOAD, go_to, idle, no_exception, page_in, shape_cell
from tests.support.browser_app import INK

pytestmark = pytest.mark.browser


def test_the_lab_trains_a_language_model_without_vega_warnings(app_url, laptop):
    """(First in this file: the tests after it leave runs going that hold the server's two training slots.)
    The language model's live loss chart has no floor line, so it is one curve, redrawn four times
    a second. Its rows sat at the top of its spec, which Streamlit sends after each first paint, and
    Vega warned "Infinite extent for field loss" about a hundred times in one run."""
    page = laptop
    warnings: list[str] = []
    page.on("console", lambda message: warnings.append(message.text))
    page.goto(app_url + "/training_lab")
    page.get_by_role("tab", name="A tiny language model").click(timeout=LOAD)
    train = page.locator(".st-key-tl_lm_run button").first
    expect(train).to_be_enabled(timeout=LOAD)
    train.click()
    expect(page.locator('[data-testid="stProgress"]')).to_contain_text(re.compile(r"step \d+ of"), timeout=LOAD)
    expect(page.get_by_text("final training loss")).to_be_visible(timeout=2 * LOAD)
    expect(page.locator(".vega-embed:visible").last.locator(":scope > .marks")).to_be_visible(timeout=LOAD)
    no_exception(page)
    page.wait_for_timeout(500)
    assert not [w for w in warnings if "WARN" in w], warnings[:5]


def test_a_link_opens_the_lab_without_the_mask_and_back_undoes_turning_it_back_on(app_url, page):
    """/training_lab?task=reversal&mask=off opens on the reversal task with the mask removed, and starts no
    run; turning the mask on is a history step, which Back undoes."""
    page.goto(app_url + "/training_lab?task=reversal&mask=off")
    removed = page.get_by_role("switch", name="Remove the causal mask")
    expect(removed).to_be_checked(timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]task=reversal&mask=off$"))
    expect(page.locator(".st-key-tl_rev_run button").first).to_be_enabled()  # no run: only Train starts one
    expect(page.locator('[data-testid="stProgress"]')).to_have_count(0)
    idle(page)
    page.get_by_text("Remove the causal mask", exact=True).click()
    expect(page).to_have_url(re.compile(r"[?&]mask=on$"), timeout=LOAD)
    expect(removed).not_to_be_checked()
    page.go_back()
    expect(removed).to_be_checked(timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]mask=off$"))
    no_exception(page)


def test_a_training_run_goes_on_while_the_learner_looks_elsewhere(app_url, page):
    """Train starts the run on a thread of its own: its progress redraws with no click, the learner
    can visit another page meanwhile, and back in the lab the run has done every step."""
    page.goto(app_url + "/training_lab")
    train = page.locator(".st-key-tl_rev_run button").first
    expect(train).to_be_enabled(timeout=LOAD)
    train.click()
    bar = page.locator('[data-testid="stProgress"]')
    expect(bar).to_contain_text(re.compile(r"step \d+ of 300"), timeout=LOAD)
    expect(train).to_be_disabled()
    seen = bar.inner_text()
    expect(bar).not_to_have_text(seen, timeout=LOAD)  # redrawn by the page's timer alone
    go_to(page, "Explorer")
    expect(shape_cell(page, 0)).to_have_text("(2, 8)", timeout=LOAD)
    go_to(page, "Training lab")
    expect(page.get_by_text("first half (x) accuracy")).to_be_visible(timeout=2 * LOAD)
    expect(page.get_by_text("300 steps", exact=True)).to_be_visible()  # the metric under "training time"
    expect(page.get_by_text("stopped early")).to_have_count(0)
    expect(train).to_be_enabled()
    no_exception(page)


def long_run(page, app_url) -> None:
    """Open the lab and start a reversal run at sizes that would train for its whole time limit."""
    page.goto(app_url + "/training_lab")
    train = page.locator(".st-key-tl_rev_run button").first
    expect(train).to_be_enabled(timeout=LOAD)
    for key, value in (("tl_rev_steps", "1000"), ("tl_rev_E", "128"), ("tl_rev_layers", "4")):
        lab_slider = page.locator(f".st-key-{key}")  # by key: the sidebar has an E slider too
        lab_slider.get_by_role("slider").press("End")
        expect(lab_slider.locator('[data-testid="stSliderThumbValue"]')).to_have_text(value, timeout=LOAD)
    train.click()
    expect(page.locator('[data-testid="stProgress"]')).to_contain_text(re.compile(r"step \d+ of 1000"),
                                                                       timeout=LOAD)


def test_a_closed_tab_gives_its_training_slot_back(app_url, browser):
    """The server trains two runs at a time. A run whose tab is closed stops a few seconds later
    (pages/lab_runs.py, ABANDON_GRACE), so a third learner does not wait out its time limit."""

    with page_in(browser, 1400, 1000) as first:
        long_run(first, app_url)
    closed = time.monotonic()  # the first tab's context is closed: its session is gone
    with page_in(browser, 1400, 1000) as second, page_in(browser, 1400, 1000) as third:
        long_run(second, app_url)  # takes the other slot for a minute
        third.goto(app_url + "/training_lab")
        train = third.locator(".st-key-tl_rev_run button").first
        expect(train).to_be_enabled(timeout=LOAD)
        busy = third.get_by_text("Two trainings are already running")
        bar = third.locator('[data-testid="stProgress"]')
        while True:  # a busy server turns the click away with a message; try again, as a learner would
            train.click()
            expect(bar.or_(busy).first).to_be_visible(timeout=LOAD)
            if bar.count():
                break
            assert time.monotonic() - closed < 40, "the closed tab's run still held its slot after 40 s"
            time.sleep(1)
        # Without the stop, the first run would have held its slot until its 60 s time limit.
        assert time.monotonic() - closed < 40
        no_exception(third)


@pytest.mark.parametrize("width,height", [(1280, 800), (1024, 768)])
def test_the_labs_first_row_of_sliders_reads_on_one_line(app_url, browser, width, height):
    """The reversal task's M and vocab_size sliders sit side by side. "M — sequence length (x, then
    reversed)" wrapped to two lines at 1280 px, and "vocab_size — random symbols" too at 1024 px, which
    pushed that slider's track below its neighbour's. The labels are short now, the rest in their help."""
    with page_in(browser, width, height) as page:
        page.goto(app_url + "/training_lab")
        expect(page.locator(".st-key-tl_rev_run button").first).to_be_enabled(timeout=LOAD)
        idle(page)
        tracks = []
        for key in ("tl_rev_M", "tl_rev_vocab"):
            label = page.locator(f".st-key-{key} [data-testid='stWidgetLabel'] p").first
            lines = label.evaluate("e => e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight)")
            assert lines < 1.5, (key, lines)
            tracks.append(page.locator(f".st-key-{key}").get_by_role("slider").bounding_box()["y"])
        assert abs(tracks[0] - tracks[1]) <= 1, tracks
        no_exception(page)


# The words of a chart's dashed lines (" = " in them), in drawing order: their colours, whether their group
# comes after the curves' (drawn over them), and whether they lie inside the plot, which the grid spans.
LINE_WORDS = """e => {
    const svg = e.querySelector('svg.marks'), marks = [...svg.querySelectorAll('g.mark-line, g.mark-text')];
    const grids = [...svg.querySelectorAll('g.role-axis-grid')].map(g => g.getBoundingClientRect());
    const plot = {x: Math.min(...grids.map(r => r.x)), right: Math.max(...grids.map(r => r.right)),
                  y: Math.min(...grids.map(r => r.y)), bottom: Math.max(...grids.map(r => r.bottom))};
    const firstLine = marks.findIndex(m => m.matches('g.mark-line'));
    return [...svg.querySelectorAll('g.mark-text text')].filter(t => t.textContent.includes(' = ')).map(t => {
        const r = t.getBoundingClientRect();
        return {text: t.textContent, stroke: t.getAttribute('stroke'), width: t.getAttribute('stroke-width'),
                size: t.getAttribute('font-size'),
                fill: t.getAttribute('fill'), after_lines: marks.indexOf(t.closest('g.mark-text')) > firstLine,
                inside: r.x >= plot.x - 1 && r.right <= plot.right + 1 && r.y >= plot.y - 1
                        && r.bottom <= plot.bottom + 1};
    });
}"""


@pytest.mark.parametrize("width,height", [(390, 844), (320, 568)])
def test_the_labs_dashed_lines_keep_their_words_readable_over_the_curves_on_a_dark_phone(app_url, browser, width,
                                                                                        height):
    """A dashed line's words had one fixed place, and a curve there ran straight through them: after
    10 steps at 390 px the masked run's line crossed "chance = 1/vocab_size = 6.2%" (117 of its one-pixel steps
    fell within the words' box), and in the dark theme nothing set them off from it. Each label now goes
    where the fewest curves cross it, inside the plot, over a halo in the page's colour drawn after the
    curves, so a curve that must pass breaks off round the letters. On a 320 px phone the loss chart's
    plot is 223 px and "best possible with the mask: ln(vocab_size)/2 = 1.39" 236 px in 11 px type: it
    began 18 px left of the plot, its halo over the axis's "1.5". There it is drawn smaller, inside the
    plot; from 360 px on, in 11 px as before."""
    with page_in(browser, width, height) as page:
        page.emulate_media(color_scheme="dark")
        page.goto(app_url + "/training_lab")
        train = page.locator(".st-key-tl_rev_run button").first
        expect(train).to_be_enabled(timeout=LOAD)
        steps = page.locator(".st-key-tl_rev_steps")
        steps.get_by_role("slider").press("Home")
        steps.get_by_role("slider").press("ArrowRight")
        expect(steps.locator('[data-testid="stSliderThumbValue"]')).to_have_text("10", timeout=LOAD)
        idle(page)
        train.click()
        expect(page.get_by_text("first half (x) accuracy")).to_be_visible(timeout=LOAD)
        idle(page)
        ink = INK["dark"]
        for name, colour in (("Line chart of the accuracy", ink["alert"]),
                             ("Line chart of the training loss", ink["label"])):
            chart = page.locator(f'[data-testid="stVegaLiteChart"][aria-label^="{name}"]')
            chart.scroll_into_view_if_needed()
            expect(chart.locator("svg.marks g.mark-line")).not_to_have_count(0, timeout=LOAD)
            drawn = chart.evaluate(LINE_WORDS)
            assert len(drawn) == 2 and drawn[0]["text"] == drawn[1]["text"], drawn  # the halo, then the words
            halo, words = drawn
            assert halo["stroke"] == ink["ground"] and float(halo["width"]) >= 3 and halo["after_lines"], halo
            assert words["fill"] == colour and words["stroke"] is None and words["inside"], words
            if width >= 360:
                assert words["size"] == halo["size"] == "11px", words  # as it was
        no_exception(page)
