"""The Cost and Compare pages: every preset's extremes render, a garbage link warns and falls back, and the
compare link reproduces its two models."""

from __future__ import annotations

import pytest

from core.compare import find_preset
from core.cost import CostSettings, cost_report
from core import DEFAULT
from quizzes import QUESTIONS, Context
from quizzes.bank import BY_ID
from tests.support.apptest import open_page, score_line


def warnings(at) -> str:
    return "\n".join(w.value for w in at.warning).replace("\\", "")  # the warning escapes markdown


def texts(at) -> str:
    """Every table's and markdown's text on the page, for reading figures off it."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    for table in at.table:
        parts.append(table.value.to_string())
    for frame in at.dataframe:
        parts.append(frame.value.to_string())
    return "\n".join(parts)


@pytest.mark.parametrize("preset", ["Default", "Tiny BERT", "Llama-2-70B", "GPT-3"])
def test_cost_page_renders_at_the_sidebars_extremes(preset):
    at = open_page("cost", {"preset": preset})
    assert not at.exception
    assert not at.warning
    cfg = find_preset(preset)
    report = cost_report(cfg, CostSettings(), live=False)
    page = texts(at)
    assert f"{report.params.total:,} parameters" in page
    assert report.compute["training compute"].filled in page  # the formula with this config's numbers
    # The rule of thumb exceeds the multiplies' count by the parameters they never touch, in every family.
    difference = report.compute["rule of thumb"].value - report.compute["FLOPs per token"].value
    assert difference >= 0 and f"{difference:+,.0f} FLOPs a token here" in page


def test_cost_page_live_check_on_a_small_model():
    at = open_page("cost", {"preset": "Tiny GPT"})
    cfg = find_preset("Tiny GPT")
    live = cost_report(cfg, CostSettings(), live=True).live
    frame = at.dataframe[-1].value
    assert list(frame["what"]) == ["FLOPs of one forward pass", "bytes saved for backward"]
    assert list(frame["measured"]) == [f"{live['counted_flops']:,}", f"{live['saved_bytes']:,}"]
    assert list(frame["our formula"]) == [f"{live['formula_flops']:,}", f"{live['expected_saved_bytes']:,}"]


def test_cost_page_choices_come_from_the_link():
    at = open_page("cost", {"preset": "Llama-2-70B", "gpu": "nvidia-a100-sxm-80gb", "mfu": "0.5", "context": "32768",
                            "batch": "4", "tokens": "2T", "optimizer": "fp32-adam", "zero": "3", "dp": "64",
                            "recompute": "selective", "flash": "on"})
    assert not at.exception and not at.warning
    settings = CostSettings(gpu="NVIDIA A100 SXM 80GB", mfu=0.5, context=32768, batch=4, train_tokens=2e12,
                            optimizer="fp32 Adam", zero_stage=3, data_parallel=64, recompute="selective", flash=True)
    report = cost_report(find_preset("Llama-2-70B"), settings, live=False)
    page = texts(at)
    for figure in (report.compute["GPU-hours"], report.inference["KV cache"], report.training["weights, gradients, "
                                                                                              "optimizer"]):
        assert figure.filled in page
    assert at.query_params["context"] == "32768" and at.query_params["gpu"] == "nvidia-a100-sxm-80gb"


def test_a_garbage_cost_link_warns_and_falls_back():
    at = open_page("cost", {"gpu": "banana", "mfu": "9"})
    assert not at.exception
    said = warnings(at)
    assert "gpu='banana' is not one of" in said and "mfu='9' is not one of" in said
    assert at.selectbox(key="c_gpu").value == "NVIDIA H100 SXM 80GB"
    assert at.select_slider(key="c_mfu").value == 0.4


def test_the_live_counter_of_a_large_model_waits_for_its_button():
    at = open_page("cost", {"preset": "Llama-2-70B"})
    assert at.button(key="c_count")
    at.button(key="c_count").click().run(timeout=300)
    assert not at.exception
    formula = cost_report(find_preset("Llama-2-70B"), CostSettings(), live=False).live["formula_flops"]
    frame = at.dataframe[-1].value
    assert list(frame["our formula"]) == [f"{formula:,}"]
    assert list(frame["measured"]) == [f"{formula:,}"]  # dense: the counter and the formula agree exactly


@pytest.mark.parametrize("a, b", [("Tiny MoE", "Tiny MLA"), ("DeepSeek-V3", "Qwen3-30B-A3B"),
                                  ("sidebar", "Llama-2-70B")])
def test_compare_page_renders_moe_and_mla(a, b):
    at = open_page("compare", {"a": a, "b": b})
    assert not at.exception and not at.warning
    assert "lines differ" in at.markdown[0].value


def test_the_compare_link_reproduces_both_models():
    at = open_page("compare", {"a": "Llama-2-70B", "b": "Mixtral-8x7B"})
    assert not at.exception and not at.warning
    assert at.selectbox(key="cmp_a").value == "Llama-2-70B" and at.selectbox(key="cmp_b").value == "Mixtral-8x7B"
    page = texts(at)
    assert "68,976,648,192" in page and "46,702,792,704" in page  # both models' total parameters
    assert at.query_params["a"] == "Llama-2-70B" and at.query_params["b"] == "Mixtral-8x7B"


def test_a_compare_link_in_another_case_finds_the_preset():
    at = open_page("compare", {"a": "llama-2-70b", "b": "MIXTRAL-8X7B"})
    assert not at.warning
    assert at.selectbox(key="cmp_a").value == "Llama-2-70B" and at.selectbox(key="cmp_b").value == "Mixtral-8x7B"


def test_a_garbage_compare_link_warns_and_falls_back():
    at = open_page("compare", {"a": "nope", "b": ""})
    assert not at.exception
    said = warnings(at)
    assert "a='nope' is not one of" in said and "b='' is not one of" in said
    assert at.selectbox(key="cmp_a").value == "sidebar" and at.selectbox(key="cmp_b").value == "Mixtral-8x7B"


def test_compare_marks_every_difference():
    at = open_page("compare", {"a": "Llama-2-7B", "b": "Llama-2-7B"})
    for table in at.table:
        assert "≠" not in table.value.to_string()
    at = open_page("compare", {"a": "Llama-2-7B", "b": "Llama-2-70B"})
    marked = "\n".join(t.value.to_string() for t in at.table)
    assert "≠" in marked


def test_the_quiz_shows_the_cost_topics_evidence_and_marks_an_answer():
    """Every Cost question's evidence draws on the quiz page; the numeric one about 6ND is marked right when
    answered with core.cost's figure."""
    from tests.support.apptest import answer, answered

    qids = [q.id for q in QUESTIONS if q.topic == "Cost" and q.applies(DEFAULT)]
    at = answered(qids, topic="Cost")
    assert not at.exception
    at = open_page("quiz", {"topic": "cost", "q": "3"})
    assert at.header[0].value == "Q3 · Cost"
    right = BY_ID["cost-6nd"].expected(Context(DEFAULT))
    answer(at, "cost-6nd", f"{right:.6g}")
    assert "**1 right**" in score_line(at)
