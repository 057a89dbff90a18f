"""render/cost.py and render/compare.py: the Cost page's tables and chart, and the Compare page's marked lines."""

from __future__ import annotations

from types import SimpleNamespace

from core.compare import Line
from core.config import REAL_MODELS
from core.cost import CostSettings, cost_report, gpus
from render.compare import DIFF_BACKGROUND, DIFFERS, differences, highlighted, section_frame, sections
from render.cost import crossover_words, figure_value, figures_frame, fits_frame, flops_frame, flops_spec

LLAMA = cost_report(REAL_MODELS["Llama-2-70B"], CostSettings(), live=False)


def test_a_figures_row_holds_its_value_formula_and_filled_formula():
    frame = figures_frame(LLAMA.inference, ["weights, bf16"])
    assert frame.to_dict("records") == [{"figure": "weights, bf16", "value": "128.5 GiB (137,953,296,384 B)",
                                         "formula": "P·2", "with this config's numbers": "68,976,648,192·2"}]


def test_flops_by_component_leave_out_the_total_and_sum_to_it():
    frame = flops_frame(LLAMA.flops_by_component)
    assert "total" not in set(frame["component"])
    assert frame["FLOPs per token"].sum() == LLAMA.flops_by_component["total"].value
    assert abs(frame["share"].sum() - 1) < 1e-12
    spec = flops_spec(frame, "#000000")
    assert spec["layer"][0]["encoding"]["y"]["field"] == "component"


def test_the_fits_table_names_each_gpus_source():
    frame = fits_frame(LLAMA.fits, gpus())
    assert list(frame["GPU"]) == [g.name for g in gpus()]
    assert list(frame["source"]) == [g.source for g in gpus()]
    h100 = frame[frame["GPU"] == "NVIDIA H100 SXM 80GB"].iloc[0]
    assert (h100["fits"], h100["GPUs needed"]) == ("no", 2)


def test_the_crossover_is_said_in_words():
    assert crossover_words(LLAMA.decode, 1).startswith("Decoding stays bound by memory at every batch")
    short = cost_report(REAL_MODELS["Llama-2-70B"], CostSettings(context=128, batch=1), live=False)
    cross = short.decode["crossover batch"].value
    assert f"about {cross:,.0f} sequences" in crossover_words(short.decode, 1)
    assert figure_value(LLAMA.decode["crossover batch"]) == "never (∞)"
    about_one = crossover_words({"crossover batch": SimpleNamespace(value=1.2)}, 4)
    assert about_one.startswith("Up to a batch of about 1 sequence, each step of decoding")


def test_compare_marks_each_differing_line():
    lines = [Line("parameters", "total", "10", "20"), Line("parameters", "norms", "4", "4"),
             Line("FLOPs", "per token", "1", "2")]
    assert sections(lines) == ["parameters", "FLOPs"] and differences(lines) == 2
    frame = section_frame(lines, "parameters", "A", "A")
    assert list(frame.columns) == ["", "parameters", "A (A)", "A (B)"]
    assert list(frame[""]) == [DIFFERS, ""]
    css = highlighted(frame).to_html().split("</style>")[0]
    shaded = {part.split("_")[-2] for part in css.split("#T_")[1:] if DIFF_BACKGROUND.split(": ")[1] in part}
    assert shaded == {"row0"}  # the differing line's cells, and no other's


def test_every_table_builds_for_experts_and_latent_attention():
    """The sidebar offers neither family, but the builders take any config's report (the CLI's and the quiz's)."""
    from core.config import PART_PRESETS

    for cfg in (PART_PRESETS["Tiny MoE (8 experts, top 2)"], PART_PRESETS["Tiny MLA (latent attention)"],
                REAL_MODELS["DeepSeek-V3"]):
        r = cost_report(cfg, CostSettings(context=32_768, batch=8), live=False)
        for figures in (r.compute, r.flops_by_component, r.inference, r.decode, r.training):
            frame = figures_frame(figures)
            assert list(frame["figure"]) == list(figures)
            assert list(frame["with this config's numbers"]) == [f.filled for f in figures.values()]
        assert flops_frame(r.flops_by_component)["FLOPs per token"].sum() == r.flops_by_component["total"].value
        assert len(fits_frame(r.fits, gpus())) == len(gpus())
        assert crossover_words(r.decode, 8)
