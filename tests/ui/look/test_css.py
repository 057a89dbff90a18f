"""The colours a chart draws straight onto the page follow the page's theme (render.palette.INK): each
reads on its own theme's background, and every page hands the learner's theme to its charts.

AppTest has no browser to report a theme, so the pages' ``theme()`` is replaced here; that Streamlit
reports a dark browser as "dark" is checked in a real browser (tests/browser)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from core.views import attention_map
from render.charts import mask_spec
from render.lab_charts import HIDDEN_CROSS
from render.palette import INK
from render.tables import memory_spec
import ui.look.charts
import ui.look.theme
from ui.look.css import CODE_INK, PRIMARY_WORDS, TOKEN_GROUPS, theme_css
from tests.support.contrast import contrast
from tests.support.apptest import LAB_PAGE as LAB, answered, explorer_opened, make_app, small_model, train

CONFIG = tomllib.loads((Path(__file__).resolve().parents[3] / ".streamlit" / "config.toml").read_text())
VISIBLE = ("#cfe0fc", "#dbe9f6")  # the visible cells of the attention page's mask and the quiz's


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_each_themes_ink_reads_on_that_themes_page(theme):
    page = CONFIG["theme"][theme]["backgroundColor"]
    ink = INK[theme]
    assert contrast(ink["label"], page) >= 4.5 and contrast(ink["alert"], page) >= 4.5  # words
    assert contrast(ink["blocked"], page) >= 3  # a shape: the masked cell against the page ...
    assert all(contrast(ink["blocked"], visible) >= 3 for visible in VISIBLE)  # ... and the visible cells
    other = INK["dark" if theme == "light" else "light"]
    assert contrast(other["label"], page) < 4.5  # so one ink for both would not do


def test_the_labs_crosses_stand_out_on_the_cells_they_mark():
    """The lab's attention maps cross out the cells the mask hid. Their weight is 0, drawn in the
    palest blue of Vega's "blues" scheme (#cfe1f2, read off a screenshot), in either theme: a cross is
    a shape, and 3:1 will do."""
    assert contrast(HIDDEN_CROSS, "#cfe1f2") >= 3
    assert contrast("#ff5555", "#cfe1f2") < 3  # the attention page's crosses, on its viridis, would not do


def faded(colour: str, ground: str, opacity: float = 0.6) -> str:
    """``colour`` drawn at ``opacity`` over ``ground``, as #rrggbb."""
    mix = [round(opacity * int(colour[i:i + 2], 16) + (1 - opacity) * int(ground[i:i + 2], 16)) for i in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in mix)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_each_themes_captions_read_on_the_page_and_the_sidebar(theme):
    """Streamlit draws a caption in the theme's text colour at 60 % opacity (measured in Chromium: a
    caption's style is the textColor with opacity 0.6), on the page or on the sidebar, whose ground is
    the secondary background. WCAG asks 4.5:1 of text this size (14 px); the light theme's captions had
    4.18:1 on the page and 4.05:1 on the sidebar."""
    colours = CONFIG["theme"][theme]
    for ground in (colours["backgroundColor"], colours["secondaryBackgroundColor"]):
        assert contrast(faded(colours["textColor"], ground), ground) >= 4.5, (theme, ground)


def test_the_dark_sidebars_slider_values_read_on_its_ground():
    """A slider writes its value in the primary colour; the sidebar's sliders are the model's sizes. The dark
    theme's #4c6ef5 stood 3.49:1 on the sidebar's ground; the sidebar has a lighter primary of its own."""
    dark = CONFIG["theme"]["dark"]
    primary = dark.get("sidebar", {}).get("primaryColor", dark["primaryColor"])
    assert contrast(primary, dark["secondaryBackgroundColor"]) >= 4.5


def test_the_chart_builders_use_the_theme_they_are_given():
    from core import TransformerConfig, trace
    from core.views import memory_curve

    cfg = TransformerConfig()
    points, crossover = memory_curve(cfg)
    a = attention_map(trace(cfg), "decoder masked self-attention", 0, 0, 0)
    for theme, other in (("light", "dark"), ("dark", "light")):
        memory = json.dumps(memory_spec(points, cfg.M, crossover, theme))
        assert INK[theme]["label"] in memory and INK[other]["label"] not in memory
        mask = json.dumps(mask_spec(a, theme))
        assert INK[theme]["blocked"] in mask and INK[other]["blocked"] not in mask


@pytest.fixture
def dark(monkeypatch):
    for module in (ui.look.theme, ui.look.charts):  # ui.look.charts holds its own name for it
        monkeypatch.setattr(module, "theme", lambda: "dark")


def specs(at) -> str:
    assert not at.exception
    return " ".join(c.proto.spec for c in at.get("vega_lite_chart"))


def test_the_pages_hand_a_dark_theme_to_their_charts(dark):
    light = INK["light"]
    at = explorer_opened(make_app())
    drawn = specs(at)  # the explorer's memory chart
    assert INK["dark"]["label"] in drawn and light["label"] not in drawn

    at.switch_page("pages/attention.py").run()
    at.radio(key="a_kind").set_value("decoder masked self-attention").run()
    drawn = specs(at)
    assert INK["dark"]["blocked"] in drawn and light["blocked"] not in drawn

    drawn = specs(answered(["mask-blocked"], topic="Masking"))  # its evidence: the causal mask as a grid
    assert INK["dark"]["blocked"] in drawn and light["blocked"] not in drawn


def test_the_training_labs_charts_take_the_dark_theme(dark):
    at = make_app().run()
    at.switch_page(LAB).run()
    small_model(at, "tl_rev", steps=5)
    drawn = specs(train(at, "tl_rev"))  # the loss curve with its floor, and the accuracy with chance
    for ink in ("label", "alert"):
        assert INK["dark"][ink] in drawn and INK["light"][ink] not in drawn


def axis_inks(at) -> set[tuple[str, str, str]]:
    """(part, property, colour) of the axis, legend and facet-header words of every chart on the page."""
    assert not at.exception
    charts = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert charts
    return {(part, prop, spec["config"][part][prop]) for spec in charts for part in ("axis", "legend", "header")
            for prop in ("labelColor", "titleColor")}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_pages_charts_write_their_axes_and_legends_in_the_themes_label_ink(theme, monkeypatch):
    """Streamlit's chart theme writes axis and legend words #808495 on a light page: 3.72:1 against white,
    measured by axe-core on every chart, under WCAG's 4.5:1. Each chart sets the theme's label ink instead
    (test_each_themes_ink_reads_on_that_themes_page holds it to 4.5:1)."""
    for module in (ui.look.theme, ui.look.charts):  # ui.look.charts holds its own name for it
        monkeypatch.setattr(module, "theme", lambda: theme)
    want = {(part, prop, INK[theme]["label"]) for part in ("axis", "legend", "header")
            for prop in ("labelColor", "titleColor")}
    at = explorer_opened(make_app(), tab="Parameters")
    assert axis_inks(at) == want  # the explorer's parameter chart
    assert axis_inks(explorer_opened(at)) == want  # and its memory chart
    at.switch_page("pages/attention.py").run()
    assert axis_inks(at) == want
    at.switch_page("pages/positional.py").run()
    assert axis_inks(at) == want
    assert axis_inks(answered(["mask-blocked"], topic="Masking")) == want  # Altair charts: the quiz's evidence
    at = make_app().run()
    at.switch_page(LAB).run()
    small_model(at, "tl_rev", steps=5)
    assert axis_inks(train(at, "tl_rev")) == want


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_each_themes_code_colours_read_on_its_code_box(theme):
    """The explorer's code box says, in comments, what each line does to a shape. Streamlit's one syntax
    palette put those comments at 3.53:1 on the light theme's box (ui/look/css.py): each theme has its
    own, every colour at 5:1 or more on the code ground the config pins, and every token group coloured."""
    ground = CONFIG["theme"][theme]["codeBackgroundColor"]
    assert set(CODE_INK[theme]) == set(TOKEN_GROUPS)
    for group, ink in CODE_INK[theme].items():
        assert contrast(ink, ground) >= 5, (group, ink, round(contrast(ink, ground), 2))
    assert contrast("#808495", CONFIG["theme"]["light"]["codeBackgroundColor"]) < 4.5  # Streamlit's grey, before
    css = theme_css(theme)
    assert ".token.comment, " in css and CODE_INK[theme]["muted"] in css
    # One rule per group, one for a caption's code, and one for the primary's words where the theme has them.
    assert css.count("{ color: ") == len(TOKEN_GROUPS) + 1 + bool(PRIMARY_WORDS[theme])


def test_a_style_sent_before_the_theme_is_known_holds_both_themes_rules_the_dark_under_a_dark_system():
    """The browser applies it (tests/browser: ..._its_colours_follow_the_system)."""
    light, dark = (theme_css(theme)[len("<style>"):-len("</style>")] for theme in ("light", "dark"))
    assert theme_css(None) == f"<style>{light} @media (prefers-color-scheme: dark) {{ {dark} }}</style>"
    assert CODE_INK["light"]["muted"] in light and CODE_INK["dark"]["muted"] in dark


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_inline_code_in_a_caption_reads_once_faded(theme):
    """A caption is drawn at 60 % opacity, its inline code and the code's chip with it. In the caption's own
    colour the code reads at 4.5:1 on its faded chip; Streamlit's green for inline code (#0c5a44 light,
    measured in Chromium) read at 2.99:1 there."""
    colours = CONFIG["theme"][theme]
    page, chip = colours["backgroundColor"], colours["codeBackgroundColor"]
    assert contrast(faded(colours["textColor"], page), faded(chip, page)) >= 4.5
    if theme == "light":
        assert contrast(faded("#0c5a44", page), faded(chip, page)) < 3


def test_the_dark_primary_serves_under_white_words_and_its_words_on_the_page_are_lighter():
    """No one blue reads at 4.5:1 both under a primary button's white words and as words on the dark page
    (#4c6ef5, before: 4.32:1 and 4.18:1). The primary is dark enough for the first and still 3:1 on the page
    for the tracks and dots it draws there; the words it would write on the page take PRIMARY_WORDS."""
    dark = CONFIG["theme"]["dark"]
    primary, page = dark["primaryColor"], dark["backgroundColor"]
    assert contrast("#ffffff", primary) >= 4.5 and contrast(primary, page) >= 3
    assert contrast(PRIMARY_WORDS["dark"], page) >= 4.5
    assert not (contrast("#ffffff", "#4c6ef5") >= 4.5 and contrast("#4c6ef5", page) >= 4.5)
    light = CONFIG["theme"]["light"]  # the light primary does both, and needs no words of its own
    assert PRIMARY_WORDS["light"] is None
    assert contrast("#ffffff", light["primaryColor"]) >= 4.5
    assert contrast(light["primaryColor"], light["backgroundColor"]) >= 4.5
    assert "stSliderThumbValue" in theme_css("dark") and "stSliderThumbValue" not in theme_css("light")
