"""The positional page for a RoPE model and for a model with no positions, opened by a link: RoPE's angles are
the model's own, it has no parameters, and the relative property is measured live at the learner's (i, j, s)."""

from __future__ import annotations

import json

import pytest

from core import TransformerConfig, trace
from core.positions import rope_angles
from core.views import rope_relative
from tests.support.apptest import open_page, running

ROPE = {"arch": "decoder-only", "N": "2", "M": "8", "E": "32", "nhead": "4", "nhead_kv": "2", "layers": "2",
        "vocab_size": "30", "positional": "rope"}
CFG = TransformerConfig(arch="decoder-only", N=2, M=8, E=32, nhead=4, nhead_kv=2, layers=2, vocab_size=30,
                        positional="rope")


def test_a_rope_model_opens_on_its_rotation_angles():
    at = open_page("positional", ROPE)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert running(at) == CFG
    assert [tab.label for tab in at.tabs] == ["RoPE rotation", "M × E table", "Dimensions as curves",
                                              "Sinusoidal vs learned"]
    rope = at.tabs[0]
    words = " ".join(c.value for c in rope.caption)
    total = trace(CFG).params["total"]
    assert f"RoPE has no parameters: this model's positional parameters number 0 of its {total:,}" in words
    assert "V is not turned" in words
    assert "**RoPE** (rotary positions): nothing is added to its token embeddings" in at.caption[0].value
    angles = rope.table[0].value  # the numbers under the heatmap: positions down, pairs across
    assert angles.shape == (8, 4)  # M positions, d_k/2 pairs
    assert angles.values.tolist() == rope_angles(8, 8)[:, :4].tolist()  # the model's own table, first half
    spec = json.loads(rope.get("vega_lite_chart")[0].proto.spec)
    assert spec["description"].startswith("Heatmap of RoPE's rotation angles: 8 positions down, 4 of the 4 pairs")
    assert "turns q and k instead" in at.tabs[1].info[0].value  # no M x E table is added


@pytest.mark.parametrize("i, j, s", [(5, 2, 10), (0, 7, 3), (40, 40, 0), (3, 1, 5000)])
def test_the_relative_property_is_measured_at_the_learners_positions(i, j, s):
    at = open_page("positional", ROPE)
    for key, value in (("p_rope_i", i), ("p_rope_j", j), ("p_rope_s", s)):
        at.number_input(key=key).set_value(value)
    at.run()
    assert not at.exception, at.exception
    scores = at.tabs[0].table[1].value
    assert list(scores["query at"]) == [i, i + s] and list(scores["key at"]) == [j, j + s]
    first, shifted = (float(x) for x in scores["q·k after RoPE"])
    want = rope_relative(CFG, i, j, s, trace(CFG))
    assert (first, shifted) == pytest.approx((want.score, want.shifted), rel=1e-8, abs=1e-12)
    assert abs(shifted - first) <= want.allowance  # agree to float32 rounding
    assert "the live model's query (head 0) and key (K/V head 0)" in " ".join(c.value for c in at.tabs[0].caption)
    assert [x.value for x in at.success][0].startswith("**Same score.** Difference: ")


def test_a_model_without_positions_says_there_is_no_position_signal():
    at = open_page("positional", {**ROPE, "positional": "none"})
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert "This model uses **no** positions: there is no position signal at all." in at.caption[0].value
    assert "Only its causal mask hints at order" in at.caption[0].value
    assert [tab.label for tab in at.tabs] == ["M × E table", "Dimensions as curves", "Sinusoidal vs learned"]
    assert "has no other position signal" in at.tabs[0].info[0].value
    assert at.tabs[2].get("vega_lite_chart")  # the tables it could add, compared, as for any model


def test_a_real_models_sizes_still_measure_the_property():
    """Llama-2-7B's sizes: no live pass, so the vectors are seeded, but the angles and scores are computed."""
    link = {"arch": "decoder-only", "N": "1", "M": "4096", "E": "4096", "nhead": "32", "layers": "32",
            "d_ff": "11008", "vocab_size": "32000", "positional": "rope", "norm": "rmsnorm", "activation": "swiglu",
            "norm_first": "true", "bias": "false"}
    at = open_page("positional", link)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    words = " ".join(c.value for c in at.tabs[0].caption)
    assert "positional parameters number 0 of its 6,738,415,616" in words
    assert "Drawn: the first 64 of M = 4,096 positions and 64 of the 64 pairs" in words
    assert "a seeded random query and key, d_k = 128 wide" in words
    assert at.success


def test_a_link_to_the_rope_tab_of_a_model_without_rope_falls_back_with_a_word():
    at = open_page("positional", {**ROPE, "positional": "learned", "tab": "rope"})
    assert not at.exception, at.exception
    warning = " ".join(w.value for w in at.main.warning).replace("\\", "")
    assert "tab='rope' is not one of table, curves, compare; showing table." in warning
    assert [tab.label for tab in at.tabs] == ["M × E table", "Dimensions as curves", "Sinusoidal vs learned"]
