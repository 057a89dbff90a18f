"""The Explorer's experts and KV-cache sections in a real browser, opened by a link: the routing heatmap's rows
are the learner's tokens, and the KV-cache chart draws latent attention's line and the window's plateau."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from core import config
from tests.support.browser import LOAD, idle, no_exception
from tests.support.links import config_query

pytestmark = pytest.mark.browser

TINY_MOE, TINY_MLA = config_query(config.TINY_MOE), config_query(config.TINY_MLA)  # as a shared link carries them


def svg_texts(chart, role: str) -> list[str]:
    """The words of one role's text elements ("axis-label", "legend-label") in an SVG chart."""
    return chart.evaluate(f"e => [...e.querySelectorAll('svg.marks g.role-{role} text')].map(t => t.textContent)")


def test_the_routing_heatmap_labels_its_rows_with_the_learners_tokens(app_url, laptop):
    page = laptop
    page.goto(f"{app_url}/?{TINY_MOE}&text=the+cat+sat+on+the+mat&tokens=word")
    expect(page.get_by_role("heading", name="Routing, live")).to_be_visible(timeout=LOAD)
    idle(page)
    chart = page.locator(".st-key-map_box_routing .vega-embed")
    chart.scroll_into_view_if_needed()
    expect(chart.locator("svg.marks")).to_be_visible(timeout=LOAD)
    labels = svg_texts(chart, "axis-label")
    for token in ("0 the", "2 cat", "4 sat", "6 on", "8 the", "10 mat"):
        assert token in labels, labels
    assert [str(e) for e in range(8)] == [label for label in labels if label.isdigit()][:8]  # the experts across
    expect(page.get_by_text("the one shape in the whole model that depends on the data").first).to_be_visible()
    no_exception(page)


def test_the_kv_cache_chart_draws_latent_attention_and_the_windows_plateau(app_url, laptop):
    page = laptop
    page.goto(f"{app_url}/?{TINY_MLA}")
    expect(page.get_by_role("heading", name="KV cache")).to_be_visible(timeout=LOAD)
    idle(page)
    chart = page.locator(".st-key-kv_cache .vega-embed").first
    chart.scroll_into_view_if_needed()
    expect(chart.locator("svg.marks")).to_be_visible(timeout=LOAD)
    legend = svg_texts(chart, "legend-label")
    assert "MLA (kv_lora_rank + rope_head_dim = 8 + 4)" in legend and "window W = 4,096 (nhead_kv = 2)" in legend
    # The window's line is the dashed one; its last points (M + G = 4,096, 8,192 and 16,384) lie level.
    lines = chart.evaluate("e => [...e.querySelectorAll('svg.marks g.mark-line path')].map(p => "
                           "[p.getAttribute('stroke-dasharray'), p.getAttribute('d')])")
    [path] = [d for dash, d in lines if dash and dash.replace(" ", ",") == "6,3"]
    ys = [float(y) for y in re.findall(r"[-\d.e]+,([-\d.e]+)", path)]
    assert len(ys) >= 10 and ys[-1] == ys[-2] == ys[-3] and ys[-4] > ys[-3]  # flat from W, rising before it
    expect(page.get_by_text(re.compile(r"\(8 \+ 4\) · 2 = 24 numbers a token")).first).to_be_visible()
    no_exception(page)
