"""One link per architecture family, opened on the Explorer in a real browser as a newcomer would: the page
draws its table with no error, the line under the sidebar's closed Architecture group names the family the
link names, and once the group is opened a toggle there goes into the link."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import LOAD, idle, no_exception, open_architecture

pytestmark = pytest.mark.browser

FAMILY_LINKS = {  # typed as a teacher would, with the parts each family is known by
    "encoder-decoder (the paper, T5)": "?arch=encoder-decoder&M=6&M_target=5",
    "decoder-only (GPT, Llama)": ("?arch=decoder-only&nhead=4&nhead_kv=2&positional=rope&norm=rmsnorm"
                                  "&activation=swiglu&norm_first=true&bias=false"),
    "encoder-only (BERT)": "?arch=encoder-only&positional=learned&activation=gelu",
}


def architecture(page):
    return page.locator(".st-key-w_arch")


def sidebar(page):
    return page.locator('[data-testid="stSidebar"]')


@pytest.mark.parametrize("family", list(FAMILY_LINKS))
def test_a_link_to_a_family_opens_the_explorer_on_that_family(app_url, page, family):
    page.goto(app_url + "/explorer" + FAMILY_LINKS[family])
    arch = family.split(" ")[0]
    # The Architecture group starts closed: the line under it names what runs, the family first.
    expect(sidebar(page).get_by_text(re.compile(rf"^{arch}, (post|pre)-norm, "))).to_be_visible(timeout=LOAD)
    expect(architecture(page)).to_have_count(0)
    idle(page)
    expect(page).to_have_url(re.compile(rf"[?&]arch={arch}(&|$)"))
    # The target length is the encoder-decoder's alone: a single stack shows no slider for it.
    target = page.locator('[data-testid="stSlider"]').filter(has_text="M_target — target length")
    expect(target).to_have_count(1 if arch == "encoder-decoder" else 0)
    # The link's values were all usable: no warning about it, and no part of the page failed.
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="this link")).to_have_count(0)
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="failed")).to_have_count(0)
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()  # the family's table
    no_exception(page)


def test_the_decoder_only_links_parts_show_in_the_sidebar_and_a_toggle_goes_into_the_link(app_url, page):
    page.goto(app_url + "/explorer" + FAMILY_LINKS["decoder-only (GPT, Llama)"])
    expect(sidebar(page).get_by_text("decoder-only, pre-norm, RMSNorm, SwiGLU, RoPE positions, GQA (nhead_kv = 2), "
                                     "no bias")).to_be_visible(timeout=LOAD)
    idle(page)
    open_architecture(page)
    expect(architecture(page).get_by_role("radio", name="decoder-only (GPT, Llama)")).to_be_checked(timeout=LOAD)
    idle(page)
    for key, name in (("w_norm_first", "pre-norm (GPT-2, Llama)"), ("w_norm", "RMSNorm"), ("w_activation", "SwiGLU"),
                      ("w_positional", "RoPE")):
        expect(page.locator(f".st-key-{key}").get_by_role("radio", name=name)).to_be_checked()
    kv = page.locator(".st-key-w_nhead_kv")
    expect(kv.get_by_text("2 (GQA)")).to_be_visible()
    expect(page.locator('[data-testid="stSidebar"]').get_by_text(
        "nhead_kv = 2 of nhead = 4: GQA, each K/V head serves 2 query heads.")).to_be_visible()
    # Back to the paper's post-norm: the radio, then the link, say so.
    page.locator(".st-key-w_norm_first").get_by_text("post-norm (the paper)").click()
    expect(page).to_have_url(re.compile(r"[?&]norm_first=false(&|$)"), timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]arch=decoder-only(&|$)"))
    no_exception(page)
