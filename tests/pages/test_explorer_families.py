"""The Explorer for every family: its own rows and extras with the trace's exact shapes, a row's code, the
diagram drawn for the family, a real model's count against its published one, and the KV-cache section."""

from __future__ import annotations

import pytest

from core import TransformerConfig, trace
from core.config import GPT2_SMALL, LLAMA2_70B, REAL_MODELS
from core.memory import PUBLISHED_PARAMS
from core.rows import extras_for, rows_for
from render.diagram import shape_text
from tests.support.apptest import explorer_opened, figure_in_words, make_app, running
from tests.support.links import config_link
from ui.link.config import snap_config

TINY = {
    "encoder-decoder": TransformerConfig(N=2, M=6, E=16, nhead=4, vocab_size=30, layers=2),
    "decoder-only": TransformerConfig(arch="decoder-only", N=2, M=6, E=16, nhead=4, vocab_size=30, layers=2),
    "encoder-only": TransformerConfig(arch="encoder-only", N=2, M=6, E=16, nhead=4, vocab_size=30, layers=2),
    "llama-like": TransformerConfig(arch="decoder-only", N=2, M=6, E=16, nhead=4, nhead_kv=2, vocab_size=30,
                                    layers=2, positional="rope", norm="rmsnorm", activation="swiglu",
                                    norm_first=True, bias=False),
    "encoder-only pre-norm MQA": TransformerConfig(arch="encoder-only", N=2, M=6, E=16, nhead=4, nhead_kv=1,
                                                   vocab_size=30, layers=1, positional="none", norm_first=True,
                                                   activation="gelu"),
}
# Every real model the sidebar reaches (Llama-3-8B's M, vocab_size and d_ff are past its sliders).
REACHED = {name: cfg for name, cfg in REAL_MODELS.items() if name != "Llama-3-8B"}
CONFIGS = {**TINY, **REACHED}


def test_every_real_model_but_llama_3_8b_is_on_the_sliders():
    assert {name for name, cfg in REAL_MODELS.items() if snap_config(config_link(cfg)) == (cfg, [])} == set(REACHED)


@pytest.fixture
def explorer_at():
    """Open the Explorer by a link to a config of any family, as a learner's shared link does."""
    def open_on(cfg: TransformerConfig):
        at = make_app(config_link(cfg)).run()
        assert running(at) == cfg, "the link did not reproduce the config"
        return at
    return open_on


def steps_text(at) -> str:
    return figure_in_words(at).markdown[0].value.replace("\\_", "_")


def parts_text(at) -> str:
    return figure_in_words(at).caption[0].value.replace("\\_", "_")


def kv_section(at) -> list[str]:
    return [h.value for h in at.header if h.value == "KV cache"]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_explorer_shows_the_familys_own_rows_with_the_traces_shapes(name, explorer_at):
    cfg = CONFIGS[name]
    at = explorer_opened(explorer_at(cfg), more=True)
    assert not at.exception, at.exception
    assert not [e.value for e in at.error], [e.value for e in at.error]
    t = trace(cfg)  # shape-only past the budget: the page's table must read the same shapes
    table, extras = at.dataframe[0].value, at.dataframe[1].value
    assert list(table["#"]) == [spec.index for spec in rows_for(cfg)] == list(range(1, len(t.rows) + 1))
    assert list(table["tensor"]) == [spec.name for spec in rows_for(cfg)]
    assert list(table["live shape"]) == [shape_text(r.shape) for r in t.rows]
    assert list(extras["tensor"]) == [spec.name for spec in extras_for(cfg)]
    assert list(extras["live shape"]) == [shape_text(r.shape) for r in t.extras]
    if cfg.arch != "encoder-decoder":
        assert not any("M_target" in c.value for c in at.caption[:1])  # a single stack has no target length
        assert "target" not in " ".join(table["tensor"])


@pytest.mark.parametrize("name", ["decoder-only", "llama-like", "Llama-2-70B"])
def test_read_a_row_whole_shows_the_code_that_makes_it(name, explorer_at):
    cfg = CONFIGS[name]
    at = explorer_opened(explorer_at(cfg), code=True)
    t = trace(cfg)
    row = t.row("ffn_hidden")
    at.selectbox(key="x_code_row").set_value(f"{row.index}. {row.name}").run()
    assert not at.exception
    [code] = [c.value for c in at.code if c.language == "python"]
    assert code == row.code and "hidden" in code and "core/model.py, FeedForward.forward" in code
    assert any(f"**{row.name}**, {row.formula}" in m.value for m in at.markdown)


def test_the_decoder_only_diagram_has_one_causal_stack_and_no_cross_attention(explorer_at):
    cfg = TINY["decoder-only"]
    at = explorer_at(cfg)
    steps = steps_text(at)
    assert "masked multi-head self-attention" in steps
    assert "cross-attention" not in steps and "encoder" not in steps and "source" not in steps
    assert "From inputs (token ids) to token embedding: (2, 6)" in steps
    # post-norm: an Add & Norm after each of its two sub-layers, and no final norm
    assert "From decoder masked multi-head self-attention to the decoder's first Add & Norm: (2, 6, 16)" in steps
    assert "From decoder feed forward (E → d_ff → E) to the decoder's second Add & Norm: (2, 6, 16)" in steps
    assert "final" not in steps and "third Add & Norm" not in steps
    assert "Decoder-only: one causal stack; no encoder, no cross-attention" in parts_text(at)


def test_a_pre_norm_gqa_rope_diagram_names_each_part_where_it_is(explorer_at):
    cfg = TINY["llama-like"]
    at = explorer_at(cfg)
    steps = steps_text(at)
    # The norm comes before each sub-layer, and a final norm after the stack.
    assert "From the decoder's first RMSNorm to decoder masked multi-head self-attention (GQA: 2 K/V heads for " \
           "4 query heads): (2, 6, 16)" in steps
    assert "From the decoder's second RMSNorm to decoder feed forward, SwiGLU (E → d_ff (gate · up) → E): " \
           "(2, 6, 16)" in steps
    assert "From the decoder's second residual + to the decoder's final RMSNorm: (2, 6, 16)" in steps
    assert "From RoPE's rotation angles to decoder masked multi-head self-attention (GQA: 2 K/V heads for 4 " \
           "query heads) to turn its Q and K: (6, 4)" in steps  # RoPE's table: (M, d_k)
    assert "Add & Norm" not in steps and "positional encoding" not in steps
    parts = parts_text(at)
    assert "K/V: nhead_kv = 2 heads shared by groups of 4/2 = 2 query heads (GQA)" in parts
    assert "Pre-norm: RMSNorm before each sub-layer, a final RMSNorm after the stack" in parts


@pytest.mark.parametrize("name", list(REACHED))
def test_a_real_models_count_is_said_to_match_its_published_figure(name, explorer_at):
    at = explorer_opened(explorer_at(REACHED[name]), tab="Parameters")
    published, named = PUBLISHED_PARAMS[name]
    said = [s.value for s in at.success if "published" in s.value]
    assert said == [f"**{published:,}**: {name}'s published {named}, matched to the parameter by counting this "
                    "model's own weights."]


def test_gpt2_small_says_124m(explorer_at):
    at = explorer_opened(explorer_at(GPT2_SMALL), tab="Parameters")
    assert any("124,439,808" in s.value and "GPT-2 small's published 124M" in s.value for s in at.success)


@pytest.mark.parametrize("name", ["encoder-decoder", "encoder-only"])
def test_no_kv_cache_section_without_a_decoder_only_model(name, explorer_at):
    at = explorer_at(TINY[name])
    assert kv_section(at) == []
    assert not [s for s in at.select_slider if s.key == "x_kv_G"]


@pytest.mark.parametrize("name", ["decoder-only", "llama-like"])
def test_the_kv_cache_section_shows_the_cache_shape_and_the_live_check_passes(name, explorer_at):
    cfg = TINY[name]
    at = explorer_at(cfg)
    assert kv_section(at) == ["KV cache"]
    for G in (0, 4, 32):
        at.select_slider(key="x_kv_G").set_value(G).run()
        assert not at.exception
        shape = (cfg.layers, 2, cfg.N, cfg.nhead_kv, cfg.M + G, cfg.d_k)
        assert any(f"= `{shape}`" in m.value for m in at.markdown), [m.value for m in at.markdown]
        [check] = [s.value for s in at.success if s.value.startswith("Live check")]
        assert f"{G} tokens generated with the cache" in check and f"The cache read off the model is {shape}" in check
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")


def test_at_llama_2_70b_the_cache_is_shape_only_and_a_4096_context_costs_1_25_gib_in_fp16(explorer_at):
    at = explorer_at(LLAMA2_70B)
    assert not at.exception
    G = at.select_slider(key="x_kv_G").value
    assert any(f"= `(80, 2, 1, 8, {4096 + G}, 128)`" in m.value for m in at.markdown)
    assert any(i.value.startswith("Shape only: no live check here") for i in at.info)
    [cost] = [m.value for m in at.markdown if "4,096-token context in fp16" in m.value]
    assert "2 · 80 layers · 8 K/V heads · 128 (d_k) · 4,096 tokens · 2 bytes = **1,342,177,280 bytes = 1.25 GiB**" \
        in cost and "with 64 K/V heads, multi-head attention's, it would be 10 GiB" in cost


def test_a_learned_table_gets_room_for_the_new_tokens_and_says_so(explorer_at):
    cfg = TINY["decoder-only"].replace(positional="learned")  # max_len = M = 6, as the sidebar sets it
    at = explorer_at(cfg)
    at.select_slider(key="x_kv_G").set_value(8).run()
    assert not at.exception
    [check] = [s.value for s in at.success if s.value.startswith("Live check")]
    assert "The cache read off the model is (2, 2, 2, 4, 14, 4)." in check
    assert "Its learned positional table has max_len = 6 rows, one per position, so the check gives it 14" in check


def test_a_single_stacks_heads_stacked_as_sdpa_takes_them(explorer_at):
    cfg = TINY["llama-like"]  # 4 query heads, 2 K/V heads, d_k = 4
    at = explorer_at(cfg)
    at.toggle(key="x_stacked").set_value(True).run()
    frame = at.dataframe[0].value.set_index("tensor")
    assert frame.loc["Q of one head", "live shape"] == "(2, 6, 4)"
    assert frame.loc["Q of one head", "SDPA layout (heads stacked)"] == "(2, 4, 6, 4)"  # (N, nhead, M, d_k)
    assert frame.loc["K and V of one K/V head", "SDPA layout (heads stacked)"] == "(2, 2, 6, 4)"  # nhead_kv
    assert frame.loc["attention output of one head", "SDPA layout (heads stacked)"] == "(2, 4, 6, 4)"


def test_a_single_stacks_memory_caption_counts_one_layer_and_no_target(explorer_at):
    from core.views import layer_crossover

    cfg = TINY["llama-like"]
    at = explorer_opened(explorer_at(cfg))
    [lesson] = [c.value for c in at.caption if "quadruples the attention term" in c.value]
    assert "M > (9E + 3·d_ff) / (2 nhead)" in lesson and f"from M = {layer_crossover(cfg)} here" in lesson
    assert "M_target" not in lesson and "decoder layer" not in lesson
    assert not any("M_target" in c.value for c in at.caption)
