"""Work a page does for a config, counted rather than timed (bench/page_latency.py times it): a page
traces a config only when it shows something of that trace, and only once."""

from __future__ import annotations

import importlib

import pytest
import streamlit as st

from core import DEFAULT, PAPER_BIG, PRESETS, TransformerConfig, trace
from ui.compute.trace_cache import CACHE
from ui.compute.traces import cached_shapes, config_over_budget, over_budget
from tests.support.apptest import make_app

GPT3 = next(name for name in PRESETS if name.startswith("GPT-3"))
# Over LIVE_TABLE_BYTES (the explorer's table is read off a shape-only trace) but within the budget.
SHAPE_ONLY_IN_BUDGET = DEFAULT.replace(M=512)  # about 49 MiB (tests/pages/test_facts.py)


@pytest.fixture
def traces(monkeypatch) -> list[tuple[TransformerConfig, bool]]:
    """Every trace any part of the app makes from now on, as (config, asked for shape-only), from
    empty caches."""
    st.cache_data.clear()
    CACHE.clear()
    made: list[tuple[TransformerConfig, bool]] = []
    core_trace = importlib.import_module("core.trace")  # the module: ``core.trace`` names the function

    def counted(cfg, *args, **kwargs):
        made.append((cfg, kwargs.get("shape_only") is True))
        return trace(cfg, *args, **kwargs)

    for module in (core_trace, importlib.import_module("ui.compute.traces"), importlib.import_module("ui.compute.trace_cache")):
        monkeypatch.setattr(module, "trace", counted)
    yield made
    st.cache_data.clear()
    CACHE.clear()


def query(cfg: TransformerConfig) -> dict[str, str]:
    return {k: str(getattr(cfg, k)) for k in ("N", "M", "M_target", "E", "nhead", "vocab_size", "layers", "d_ff")}


@pytest.mark.parametrize("cfg, over", [(DEFAULT, False), (SHAPE_ONLY_IN_BUDGET, False), (PAPER_BIG, True)],
                         ids=["real", "shape-only", "over"])
def test_the_budget_check_from_the_estimate_agrees_with_the_trace(cfg, over):
    """Pages that need no pass ask the estimate; the others ask the trace they got; and core itself
    refuses a real pass exactly when both say it is over."""
    assert config_over_budget(cfg) is over_budget(cached_shapes(cfg)) is over
    if over:
        with pytest.raises(ValueError, match="over the budget"):
            trace(cfg, shape_only=False)
    else:
        assert not trace(cfg, shape_only=False).shape_only


@pytest.mark.parametrize("positional, traced", [("sinusoidal", False), ("learned", True)])
def test_the_positional_page_traces_only_for_the_models_own_learned_table(traces, positional, traced):
    """It needs no pass: its tables come from the formula or are seeded. It traced every config only to
    ask whether the pass was over the budget (0.7 s at 96+96 layers); now only a learned table within
    the budget is read off the traced model, which needs the pass."""
    at = make_app({"positional": positional}).switch_page("pages/positional.py").run()  # the first run opens it
    assert not at.exception, at.exception
    assert traces == ([(DEFAULT.replace(positional="learned"), False)] if traced else [])


def test_the_positional_page_says_the_pass_is_over_the_budget_without_tracing(traces):
    at = make_app().run()
    at.switch_page("pages/positional.py").run()
    traces.clear()
    at.sidebar.selectbox(key="w_preset").set_value(GPT3).run()
    assert not at.exception, at.exception
    assert any("This page needs no pass" in i.value for i in at.info)
    assert traces == []


def test_the_quiz_traces_a_shape_only_config_once_for_the_page_and_its_shape_evidence(traces):
    """The page's trace serves the two shape experiments too: each made a trace of its own before."""
    at = make_app(query(SHAPE_ONLY_IN_BUDGET)).run()
    at.switch_page("pages/quiz.py").run()
    for qid in ("dk-wq", "qkv-q-head"):  # pass_shapes' and attention_shapes' evidence
        at.session_state["quiz_at"] = qid
        at.run()
        at.text_input(key=f"ans_{qid}").input("(1, 2)")
        at.button(key=f"submit_{qid}").click().run()
        assert not at.exception, at.exception
        assert qid in at.session_state["quiz_progress"]["answers"]
    assert any("Live evidence: One attention block" in m.value for m in at.markdown)
    assert traces == [(SHAPE_ONLY_IN_BUDGET, True)]


def test_the_quiz_makes_one_shape_only_trace_for_both_shape_experiments_beside_a_real_pass(traces):
    """A config small enough for a real pass (many layers, small widths): the page reads the real
    one, and the two shape experiments, whose notes say they read a shape-only trace, share one."""
    cfg = DEFAULT.replace(layers=12)
    at = make_app({**query(cfg), "layers": "12"}).run()
    at.switch_page("pages/quiz.py").run()
    for qid in ("dk-wq", "qkv-q-head"):
        at.session_state["quiz_at"] = qid
        at.run()
        at.text_input(key=f"ans_{qid}").input("(1, 2)")
        at.button(key=f"submit_{qid}").click().run()
        assert not at.exception, at.exception
    assert any("Read off a shape-only trace of this config" in c.value for c in at.caption)
    assert traces == [(cfg, False), (cfg, True)]  # the real pass, then one shape-only trace


@pytest.mark.parametrize("page", ["pages/positional.py", "pages/attention.py"])
def test_a_heatmaps_numbers_are_styled_once_per_table_and_replayed_after(page, monkeypatch):
    """The numbers under a heatmap are a pandas Styler, which Streamlit turned into its table on every
    rerun (0.15-0.25 s at 64 x 64). Now once per table: a rerun replays it, with the same cells."""
    table_module = importlib.import_module("streamlit.elements.table")
    styled = []
    original = table_module.marshall_styler
    monkeypatch.setattr(table_module, "marshall_styler", lambda *a: styled.append(a) or original(*a))
    st.cache_data.clear()
    at = make_app({"M": "64", "E": "64", "nhead": "2", "N": "1", "layers": "1"}).switch_page(page).run()
    first = at.table[0]
    assert first.value.shape == (64, 64) and len(styled) == 1
    at.run()
    assert not at.exception, at.exception
    assert len(styled) == 1
    assert at.table[0].proto == first.proto  # the same element: cells, their text and styles
