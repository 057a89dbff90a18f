"""The Explorer's Architecture tab for the new parts, opened by a link: the figure in words names the router and the
experts, MLA's projections around its latent, and the window, as the drawing does."""

from __future__ import annotations

import pytest

from core.config import TINY_LLAMA, TINY_MLA, TINY_MOE
from tests.support.apptest import explorer_opened, make_app
from tests.support.links import config_link


@pytest.mark.parametrize("cfg, step, legend", [
    (TINY_MOE, "From the decoder's second RMSNorm to the decoder's router (E → n\\_experts = 8, top\\_k = 2): "
               "(2, 8, 16)", "Layer 0 keeps a dense FFN (first\\_dense\\_layers = 1); drawn: layer 1"),
    (TINY_MLA, "From the down-projection W\\_DKV (E → kv\\_lora\\_rank + rope\\_head\\_dim) to the latent c\\_KV, "
               "kv\\_lora\\_rank = 8 wide, which the cache keeps (normalised): (2, 8, 8)",
     "Cache: a latent of kv\\_lora\\_rank = 8 + rotary key of 4 a token"),
    (TINY_LLAMA.replace(window=3, global_every=2, layers=4), "through a window of W = 3 positions",
     "Window: W = 3; every 2nd layer (1, 3, …) attends in full"),
], ids=["experts", "latent", "window"])
def test_the_figure_in_words_names_the_new_parts(cfg, step, legend):
    at = make_app(config_link(cfg), timeout=120).run()
    at.switch_page("pages/explorer.py")
    at = explorer_opened(at.run(), tab="Architecture", words=True)  # a page switch drops what was set before it
    assert not at.exception, at.exception
    assert not [e.value for e in at.error if "architecture" in e.value.lower()]
    [words] = [e for e in at.expander if e.label.startswith("The figure in words")]
    text = "\n".join(m.value for m in words.markdown)
    assert step in text
    assert legend in " ".join(c.value for c in words.caption)
