"""render/evidence.py's builders on their own, without a page: the quiz page's tests see them only
through what a run draws."""

import math

from quizzes.experiments import Evidence
from render.evidence import (ASKED, ASKED_STYLE, HEADER_PX, ROW_PX, ROWS_IN_VIEW, chart_description, charts, facets,
                            marked_table, name_from_key, table_height, value_text)


def test_values_read_as_a_learner_writes_them():
    assert value_text(201326592) == "201,326,592"
    assert value_text((64, 4096, 12288)) == "(64, 4096, 12288)"  # a shape keeps its sizes apart, no separators
    assert value_text(0.123456) == "0.1235"
    assert [value_text(math.inf), value_text(-math.inf), value_text(math.nan)] == ["infinite", "minus infinite", "no value"]
    assert value_text(list(range(13))) == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, …"
    assert value_text(True) == "True"


def test_a_key_reads_with_spaces_except_inside_the_learners_symbols():
    assert name_from_key("variance_unscaled_at_d_k") == "variance unscaled at d_k"
    assert name_from_key("M_target_positions") == "M_target positions"
    assert name_from_key("max_len") == "max_len"


def test_a_long_table_scrolls_after_a_screenful_and_a_short_one_shows_whole():
    assert table_height(ROWS_IN_VIEW) == "content"
    assert table_height(64) == HEADER_PX + ROW_PX * ROWS_IN_VIEW + ROW_PX // 2


def test_the_row_asked_about_is_marked_in_words_and_shaded_and_its_key_is_not_shown():
    records = [{"key": "src", "tensor": "input tokens", "live shape": "(2, 8)"},
               {"key": "emb", "tensor": "token embedding", "live shape": "(2, 8, 16)"}]
    styled, row = marked_table(records, "emb")
    assert row is records[1]
    shown = styled.data
    assert list(shown.columns) == ["your question", "tensor", "live shape"]
    assert list(shown["your question"]) == ["", ASKED]
    css = styled.to_html().split("</style>")[0]
    shaded = css.split(ASKED_STYLE.split(";")[0])[0].rsplit("}", 1)[-1]  # the selectors of the shaded rule
    assert all(f"_row1_col{c}" in shaded for c in range(3)) and "_row0_" not in shaded

    plain_table, none = marked_table(records, "not-there")
    assert none is None and "your question" not in plain_table.data.columns and "key" not in plain_table.data.columns


def test_a_small_bar_chart_is_described_value_by_value():
    ev = Evidence(name="demo", title="Parameters per part", values={},
                  records=[{"part": "attention", "parameters": 1088}, {"part": "FFN", "parameters": 2128}],
                  chart={"kind": "bar", "x": "part", "y": "parameters"})
    assert chart_description(ev) == ("Parameters per part. Bar chart of parameters against part. "
                                     "attention: 1,088; FFN: 2,128.")
    assert len(charts(ev)) == 1


def test_a_faceted_heatmap_is_one_chart_per_map_each_saying_which_it_is():
    records = [{"model": m, "output": i, "input": j, "influence": float(i >= j or m == "full")}
               for m in ("causal", "full") for i in range(2) for j in range(2)]
    ev = Evidence(name="maps", title="Influence maps", values={}, records=records,
                  chart={"kind": "heatmap", "x": "input", "y": "output", "color": "influence", "facet": "model"})
    drawn = charts(ev)
    assert len(drawn) == 2
    causal = dict(facets(ev))["causal"]
    assert chart_description(ev, "causal", causal) == (
        "Influence maps, map 1 of 2: causal. Heatmap of influence, 2 outputs down by 2 inputs across: influence "
        "from 0 to 1, 1 of 4 cells exactly zero (white).")


def test_a_table_or_an_empty_evidence_draws_no_chart():
    assert charts(Evidence(name="t", title="t", values={}, records=[{"a": 1}], chart={"kind": "table"})) == []
    assert charts(Evidence(name="e", title="e", values={"a": 1})) == []
