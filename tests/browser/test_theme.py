"""Both themes in a real browser: the app follows the system's light or dark setting (before the server
knows it, too), a switch of theme redraws the charts in the new theme's ink, the architecture figure
keeps its white ground, and captions, code and slider values read at WCAG's 4.5:1 in either theme."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import LOAD, idle, keep, no_exception, open_architecture
from tests.support.browser_app import CODE_INK, INK, PRIMARY_WORDS, contrast, css_hex, hex_rgb, theme_css

pytestmark = pytest.mark.browser


def test_a_dark_system_setting_gets_the_dark_theme_and_a_readable_figure(app_url, browser, tmp_path):
    """The app follows the system's light or dark setting. In the dark theme the architecture figure,
    whose labels and arrows are drawn dark, keeps its own white ground instead of showing them on
    near-black."""
    from io import BytesIO

    from PIL import Image

    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="dark")
    try:
        page = context.new_page()
        page.goto(app_url)
        figure = page.get_by_role("img", name=re.compile("^The Transformer: one of its"))
        expect(figure).to_be_visible(timeout=LOAD)
        no_exception(page)
        background = page.locator('[data-testid="stApp"]').evaluate("e => getComputedStyle(e).backgroundColor")
        assert max(map(int, re.findall(r"\d+", background)[:3])) < 64  # a near-black page
        figure.scroll_into_view_if_needed()
        shot = figure.screenshot(path=tmp_path / "dark_figure.png")
        keep(tmp_path / "dark_figure.png", tmp_path)
        image = Image.open(BytesIO(shot)).convert("RGB")
        width, height = image.size
        corners = [image.getpixel((x, y)) for x in (20, width - 20) for y in (height // 2, height - 20)]
        assert all(min(pixel) > 240 for pixel in corners)  # white ground, well inside its rounded corners

        # Streamlit tells the page its theme: the causal mask's blocked cells take the dark theme's grey,
        # which stands out from the near-black page, not the light theme's, which would sink into it.
        page.goto(app_url + "/attention")
        page.get_by_text("decoder masked self-attention").click(timeout=LOAD)
        mask = page.locator('[data-testid="stVegaLiteChart"][aria-label^="The mask as a grid"]')
        expect(mask).to_have_attribute("aria-label", re.compile("28 of the 64 pairs are blocked"), timeout=LOAD)
        page.wait_for_timeout(500)  # the cells' paint after the new data
        no_exception(page)
        shot = mask.screenshot(path=tmp_path / "dark_mask.png")
        keep(tmp_path / "dark_mask.png", tmp_path)
        colours = {rgb for _, rgb in Image.open(BytesIO(shot)).convert("RGB").getcolors(1 << 24)}
        assert hex_rgb(INK["dark"]["blocked"]) in colours and hex_rgb(INK["light"]["blocked"]) not in colours
    finally:
        context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_before_the_server_knows_the_theme_its_colours_follow_the_system(browser, scheme):
    """A session's first run can end before the browser has told the server its theme. The style sent
    then (ui.look.css with no theme) gives each system scheme its own colours: a dark system's
    slider values and code comments were drawn in the light theme's until the next run. Drawn here on a
    page of our own, so that no run of the app can bring the known theme's style first."""
    context = browser.new_context(color_scheme=scheme)
    try:
        page = context.new_page()
        # The two hooks the style targets: a keyed lab slider's thumb value, and a keyed code box's tokens.
        page.set_content(theme_css(None) + '<div class="st-key-tl_M"><div data-testid="stSliderThumbValue">'
                         '<p id="value">16</p></div></div><div class="st-key-code_row"><pre>'
                         '<span id="comment" class="token comment"># (N, M, E)</span></pre></div>')
        colour = "getComputedStyle(document.getElementById(id)).color"
        comment = css_hex(page.evaluate(f"id => {colour}", "comment"))
        assert comment == CODE_INK[scheme]["muted"]
        value = css_hex(page.evaluate(f"id => {colour}", "value"))
        if PRIMARY_WORDS[scheme]:
            assert value == PRIMARY_WORDS[scheme]
        else:
            assert value != PRIMARY_WORDS["dark"]
    finally:
        context.close()


def theme_style_came(page, colour: str) -> None:
    """Wait for the theme's <style> (ui.look.css), known by a ``colour`` only that theme's has. The server
    learns the browser's theme with a run (pages.theme_watch asks for one when it changes), and a first run may
    end before it: one CI run read the dark primary words' colour before the dark theme's style had come."""
    page.wait_for_function("c => [...document.querySelectorAll('style')].some(s => s.textContent.includes(c))",
                           arg=colour, timeout=LOAD)


# A caption's colour as drawn: its text colour at its opacity over the ground it sits on (the page's, or the
# sidebar's), both as the browser computes them.
CAPTION_INK = """([caption, ground]) => {
  const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const ink = rgb(getComputedStyle(caption).color), under = rgb(getComputedStyle(ground).backgroundColor);
  const a = Number(getComputedStyle(caption).opacity);
  return '#' + ink.map((c, i) => Math.round(a * c + (1 - a) * under[i]).toString(16).padStart(2, '0')).join('');
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_captions_read_at_4_5_to_1_on_the_page_and_the_sidebar(app_url, browser, scheme):
    """Captions carry much of what the pages say (what a map shows, how a run went), in a fainter ink than
    the text. axe-core measured the light theme's at 4.18:1 on the page (#797c83 on white) and 4.05:1 on
    the sidebar, under WCAG's 4.5:1 for 14 px text; each theme's text colour is now dark or light enough."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme=scheme)
    try:
        page = context.new_page()
        page.goto(app_url + "/quiz")
        idle(page)
        for where in ("stMain", "stSidebar"):
            box = page.locator(f'[data-testid="{where}"]')
            caption = box.locator('[data-testid="stCaptionContainer"]').first
            expect(caption).to_be_visible(timeout=LOAD)
            ground = page.locator('[data-testid="stApp"]') if where == "stMain" else box
            ink = page.evaluate(CAPTION_INK, [caption.element_handle(), ground.element_handle()])
            under = css_hex(ground.evaluate("e => getComputedStyle(e).backgroundColor"))
            assert contrast(ink, under) >= 4.5, (where, ink, under, round(contrast(ink, under), 2))
        no_exception(page)
    finally:
        context.close()


# Every token of a code box as the browser colours it, and the box's ground.
CODE_TOKENS = """box => {
  const pre = box.querySelector('pre');
  return [getComputedStyle(pre).backgroundColor,
          [...pre.querySelectorAll('.token')].map(t => [t.className, getComputedStyle(t).color])];
}"""


# Inline code in a caption as drawn: the code's colour and its chip's, each at the caption's opacity over the page.
CAPTION_CODE_INK = """([code, ground]) => {
  const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const under = rgb(getComputedStyle(ground).backgroundColor);
  let a = 1;
  for (let e = code; e; e = e.parentElement) a *= Number(getComputedStyle(e).opacity);
  const hex = v => v.toString(16).padStart(2, '0');
  const fade = c => '#' + rgb(c).map((v, i) => hex(Math.round(a * v + (1 - a) * under[i]))).join('');
  return [fade(getComputedStyle(code).color), fade(getComputedStyle(code).backgroundColor), a];
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_explorers_code_and_a_captions_code_read_at_4_5_to_1(app_url, browser, scheme):
    """The code box under "Read a row whole" says in its comments what each line does to a shape.
    Streamlit's syntax colours stood 2.56 to 3.71 to 1 on the light theme's code box (comments 3.53),
    and its green inline code inside a caption, faded with the caption, 2.99:1 (ui.theme_css.py).
    Every token now reads at 4.5:1 or more in either theme, and so does a caption's code."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme=scheme)
    try:
        page = context.new_page()
        page.goto(app_url + "/explorer")
        idle(page)
        theme_style_came(page, CODE_INK[scheme]["muted"])
        page.locator(".st-key-x_code summary").click()  # the row's code is drawn once its box is opened
        box = page.locator('[data-testid="stMain"] [data-testid="stCode"]:visible').filter(
            has_text="MultiHeadAttention")
        expect(box).to_have_count(1, timeout=LOAD)
        ground, tokens = box.evaluate(CODE_TOKENS)
        ground = css_hex(ground)
        inks = {css_hex(colour) for _, colour in tokens}
        assert len(inks) >= 4  # comments, punctuation and operators, numbers, strings
        assert all(contrast(ink, ground) >= 4.5 for ink in inks), (ground, sorted(inks))
        comments = {css_hex(colour) for kind, colour in tokens if "comment" in kind.split()}
        assert comments == {CODE_INK[scheme]["muted"]}, comments  # the app's colours won over Streamlit's
        code = page.locator('[data-testid="stMain"] [data-testid="stCaptionContainer"] code').filter(
            has_text="enc.0.self_attn.q")
        expect(code).to_have_count(1, timeout=LOAD)
        ink, chip, opacity = page.evaluate(CAPTION_CODE_INK, [code.element_handle(),
                                                              page.locator('[data-testid="stApp"]').element_handle()])
        assert opacity < 1 and contrast(ink, chip) >= 4.5, (ink, chip, opacity, round(contrast(ink, chip), 2))
        no_exception(page)
    finally:
        context.close()


def test_the_dark_themes_primary_words_and_buttons_read_at_4_5_to_1(app_url, browser):
    """axe-core measured the dark theme's primary blue at 4.18:1 as the lab's slider values and selected tab
    name on the page, and at 4.32:1 under the Train button's white words. Each reads at 4.5:1 now."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="dark")
    try:
        page = context.new_page()
        page.goto(app_url + "/training_lab")
        idle(page)
        main = page.locator('[data-testid="stMain"]')
        ground = css_hex(page.locator('[data-testid="stApp"]').evaluate("e => getComputedStyle(e).backgroundColor"))
        values = main.locator('[data-testid="stSliderThumbValue"] p')
        expect(values.first).to_be_visible(timeout=LOAD)
        theme_style_came(page, PRIMARY_WORDS["dark"])
        tab = main.locator('[data-testid="stTab"][aria-selected="true"] p')
        inks = {css_hex(c) for c in values.evaluate_all("es => es.map(e => getComputedStyle(e).color)")}
        inks.add(css_hex(tab.evaluate("e => getComputedStyle(e).color")))
        assert inks == {PRIMARY_WORDS["dark"]} and contrast(PRIMARY_WORDS["dark"], ground) >= 4.5, (inks, ground)
        train = main.get_by_role("button", name="Train")
        fill = css_hex(train.evaluate("e => getComputedStyle(e).backgroundColor"))
        words = css_hex(train.locator("p").evaluate("e => getComputedStyle(e).color"))
        assert contrast(words, fill) >= 4.5, (words, fill)
        no_exception(page)
    finally:
        context.close()


def test_the_sidebars_slider_values_read_at_4_5_to_1_in_the_dark_theme(app_url, browser):
    """The sidebar's sliders write the model's sizes in the primary colour, on the sidebar's ground: axe-core
    measured the dark theme's at 3.49:1 (#4c6ef5 on #23262f). Every one of them reads at 4.5:1 now."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="dark")
    try:
        page = context.new_page()
        page.goto(app_url)
        idle(page)
        sidebar = page.locator('[data-testid="stSidebar"]')
        values = sidebar.locator('[data-testid="stSliderThumbValue"]')
        expect(values).to_have_count(8, timeout=LOAD)  # the sizes' sliders
        open_architecture(page)
        expect(values).to_have_count(10, timeout=LOAD)  # and, the Architecture group opened, nhead_kv and head_dim
        ground = css_hex(sidebar.evaluate("e => getComputedStyle(e).backgroundColor"))
        inks = {css_hex(c) for c in values.evaluate_all("es => es.map(e => getComputedStyle(e).color)")}
        assert max(hex_rgb(ground)) < 64  # the dark theme's near-black sidebar
        assert all(contrast(ink, ground) >= 4.5 for ink in inks), (inks, ground)
        no_exception(page)
    finally:
        context.close()


def test_a_switch_of_theme_redraws_the_charts_in_the_new_themes_ink(app_url, page):
    """Streamlit tells the server the theme only with a run, and a switch of theme (the app's menu, or the
    system going dark at dusk) starts none: the attention maps' axis labels stayed #6b6b6b on the dark
    page, 3.4:1, until the learner next touched a control. The switch now starts a run (pages.theme_watch),
    and back again."""
    css = '[data-testid="stVegaLiteChart"] svg .role-axis-label text'
    labels = page.locator(css)

    def ink() -> set[str]:
        return set(labels.evaluate_all("texts => texts.map(t => t.getAttribute('fill'))"))

    page.emulate_media(color_scheme="light")
    page.goto(app_url + "/attention")
    expect(labels.first).to_be_visible(timeout=LOAD)
    idle(page)
    assert ink() == {INK["light"]["label"]}
    for kind in ("dark", "light"):
        page.emulate_media(color_scheme=kind)
        page.wait_for_function(
            "([css, want]) => { const t = [...document.querySelectorAll(css)];"
            " return t.length > 0 && t.every(e => e.getAttribute('fill') === want); }",
            arg=[css, INK[kind]["label"]], timeout=LOAD)
        idle(page)
        assert ink() == {INK[kind]["label"]}, kind
    no_exception(page)
