"""What the Explorer's KV-cache section computes: the cache's shape and bytes after G new tokens, MHA, GQA and
MQA at the same sizes, a context's cost per sequence, the live check against uncached passes, and when the
check cannot run; and which real model a config is."""

import pytest

from core import TransformerConfig
from core.config import GPT2_SMALL, LLAMA2_70B, REAL_MODELS
from core.kv_cache import MAX_CHECK_G, check_cache, check_refusal, room_for
from core.memory import PUBLISHED_PARAMS, param_counts, real_model
from core.views import context_cost, kv_cache_view, kv_kinds

DEC = TransformerConfig(arch="decoder-only", N=2, M=5, E=16, nhead=4, layers=3, vocab_size=40, seed=1)


@pytest.mark.parametrize("parts", [{}, {"nhead_kv": 2}, {"nhead_kv": 1},
                                   {"nhead_kv": 2, "positional": "rope", "norm": "rmsnorm", "activation": "swiglu",
                                    "norm_first": True, "bias": False}])
def test_the_live_check_reads_the_grown_cache_and_its_logits_agree(parts):
    cfg = DEC.replace(**parts)
    check = check_cache(cfg, 7)
    assert check.cache_shape == (3, 2, 2, cfg.nhead_kv, 5 + 7, 4)
    assert check.agree and check.max_abs_diff <= check.tolerance


def test_the_view_gives_the_shape_bytes_and_one_line_per_kind_of_attention():
    v = kv_cache_view(DEC.replace(nhead_kv=2), 11)
    assert v.shape == (3, 2, 2, 2, 16, 4)
    assert v.bytes == 2 * 3 * 2 * 2 * 16 * 4 * 4 and v.bytes_fp16 == v.bytes // 2
    assert [k.name for k in v.kinds] == ["MHA", "GQA", "MQA", "MLA", "window"]
    assert v.own == "GQA"
    assert v.chosen == {"tokens": 16, "attention": "GQA (nhead_kv = 2)", "bytes": v.bytes}
    by_kind = {}
    for p in v.points:
        by_kind.setdefault(p["attention"], {})[p["tokens"]] = p["bytes"]
    mha, gqa, mqa = (by_kind[v.kind(name).label] for name in ("MHA", "GQA", "MQA"))
    assert mha[16] == 2 * gqa[16] == 4 * mqa[16]  # fewer K/V heads: the same factor
    assert gqa[16] == v.bytes and max(mqa) == 4 * 4096  # past four of Mistral's windows


def test_the_kinds_have_no_repeats_and_a_gqa_when_nhead_allows_one():
    assert kv_kinds(DEC.replace(nhead=1, nhead_kv=1)) == {"MHA": 1}
    assert kv_kinds(DEC.replace(E=14, nhead=2, nhead_kv=None)) == {"MHA": 2, "MQA": 1}
    assert kv_kinds(LLAMA2_70B) == {"MHA": 64, "GQA": 8, "MQA": 1}
    assert kv_kinds(LLAMA2_70B.replace(nhead_kv=64)) == {"MHA": 64, "GQA": 8, "MQA": 1}  # nhead / 8, as Llama


def test_llama_2_70b_holds_a_4096_token_context_in_1_25_gib_of_fp16():
    assert context_cost(LLAMA2_70B, 4096) == 2 * 80 * 8 * 128 * 4096 * 2 == 1_342_177_280 == 1.25 * 2**30
    assert context_cost(LLAMA2_70B, 4096, nhead_kv=64) == 10 * 2**30


def test_a_learned_table_gets_room_for_the_new_positions():
    learned = DEC.replace(positional="learned")  # max_len = M = 5, as the app sets it
    assert room_for(learned, 0) == learned and room_for(learned, 7).max_len == 12
    assert room_for(DEC, 7) == DEC
    check = check_cache(learned, 7)
    assert check.agree and check.cache_shape == (3, 2, 2, 4, 12, 4)


def test_the_view_refuses_what_has_no_cache():
    with pytest.raises(ValueError, match="keeps no KV cache"):
        kv_cache_view(TransformerConfig(), 1)
    with pytest.raises(ValueError, match="G=-1"):
        kv_cache_view(DEC, -1)


def test_the_live_check_says_why_it_cannot_run():
    assert check_refusal(DEC, 8) is None
    assert "does not generate" in check_refusal(TransformerConfig(), 1)
    assert check_refusal(DEC.replace(positional="learned", max_len=5), 8) is None  # the check makes room
    assert f"more than the {MAX_CHECK_G}" in check_refusal(DEC, MAX_CHECK_G + 1)
    assert "over the 32.0 MiB" in check_refusal(LLAMA2_70B, 0)


def test_a_real_model_is_known_by_its_parts_and_widths_whatever_its_batch():
    for name, cfg in REAL_MODELS.items():
        assert real_model(cfg) == name and real_model(cfg.replace(N=4)) == name
        assert param_counts(cfg)["total"] == PUBLISHED_PARAMS[name][0]
    assert real_model(LLAMA2_70B.replace(nhead_kv=64)) is None
    assert real_model(GPT2_SMALL.replace(max_len=2048)) is None  # a longer learned table: more parameters
    assert real_model(DEC) is None
