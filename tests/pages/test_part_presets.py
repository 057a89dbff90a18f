"""Every page at each preset of the new parts (experts, latent attention, a window, T5), opened by its link."""

from __future__ import annotations

import pytest

from core import PRESETS
from core.config import PART_PRESETS
from tests.support.apptest import make_app, running

PAGES = ["pages/explorer.py", "pages/attention.py", "pages/positional.py", "pages/quiz.py", "pages/training_lab.py",
         "pages/decoding.py", "pages/cost.py", "pages/compare.py"]
REAL = ["T5-small", "T5-base", "Mistral-7B", "Mixtral-8x7B", "Qwen3-30B-A3B", "DeepSeek-V2-Lite", "DeepSeek-V3"]
CASES = [pytest.param(name, page, marks=[pytest.mark.slow] if name in REAL else [], id=f"{name.split(' (')[0]}-{page}")
         for name in [*PART_PRESETS, *REAL] for page in PAGES]


@pytest.mark.parametrize("name, page", CASES)
def test_every_page_renders_at_each_new_preset(name, page):
    at = make_app({"preset": name}).run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    assert running(at) == PRESETS[name]
    assert not at.error, [e.value for e in at.error]
