"""The attention page for every family and every kind of K/V heads, opened by a link as a learner would:
its own attention, its mask in the weights, and which query heads share a K/V head."""

from __future__ import annotations

import json

import pytest

from core import TransformerConfig, trace
from core.views import attention_map
from tests.support.apptest import open_page, running

FAMILIES = ("encoder-decoder", "decoder-only", "encoder-only")
HEADS = {"MHA": "4", "GQA": "2", "MQA": "1"}
# The heads table's rows: K/V head -> the query heads that read it (nhead = 4).
GROUPS = {"GQA": ["0 and 1", "2 and 3"], "MQA": ["0 to 3"]}
LINK = {"N": "2", "M": "8", "E": "16", "nhead": "4", "layers": "2", "vocab_size": "30"}


def drawn_weights(at) -> tuple[str, list[list[float]]]:
    """The weights heatmap's description and its cells as rows of queries."""
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    cells = spec["layer"][0]["data"]["values"]
    rows = 1 + max(c["query"] for c in cells)
    weights = [[0.0] * (1 + max(c["key"] for c in cells)) for _ in range(rows)]
    for c in cells:
        weights[c["query"]][c["key"]] = c["weight"]
    return spec["description"], weights


@pytest.mark.parametrize("arch", FAMILIES)
@pytest.mark.parametrize("heads", HEADS)
def test_every_family_and_kind_of_kv_heads(arch, heads):
    at = open_page("attention", {**LINK, "arch": arch, "nhead_kv": HEADS[heads]})
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert not at.warning, [w.value for w in at.warning]  # the link was read as written
    cfg = running(at)
    assert (cfg.arch, cfg.nhead_kv) == (arch, int(HEADS[heads]))
    kinds = [r for r in at.radio if r.key == "a_kind"]
    if arch == "encoder-decoder":  # today's page: three kinds to choose
        assert kinds[0].options == ["encoder self-attention", "decoder masked self-attention", "cross-attention"]
    else:  # one stack, one attention: nothing to choose, and the page says which
        assert not kinds
        one = "Causal self-attention" if arch == "decoder-only" else "Self-attention"
        assert any(m.value.startswith(f"**{one}**, the one attention of a") for m in at.markdown)
        assert at.query_params["kind"] == ("causal" if arch == "decoder-only" else "self")
    t = trace(TransformerConfig(**{**{k: int(v) for k, v in LINK.items()}, "arch": arch,
                                   "nhead_kv": int(HEADS[heads])}))
    for head in range(4):
        at.selectbox(key="a_head").set_value(head).run()
        assert not at.exception, at.exception
        description, weights = drawn_weights(at)
        kind = at.session_state["a_kind"]
        assert description.startswith(f"Heatmap of the {kind} weights of layer 0, head {head}, batch item 1")
        assert weights == attention_map(t, kind, 0, head, 1).weights
        if arch == "decoder-only":  # causal: every entry above the diagonal is 0
            assert all(weights[i][j] == 0 for i in range(8) for j in range(i + 1, 8))
            assert any(weights[i][j] > 0 for i in range(8) for j in range(i))
        elif arch == "encoder-only":  # bidirectional, but the last sequence's last quarter is padding
            assert all(row[6:] == [0, 0] for row in weights)
            assert all(row[j] > 0 for row in weights for j in range(6))
    captions = " ".join(c.value for c in at.caption)
    if heads == "MHA":
        assert "Multi-head attention (MHA): nhead_kv = nhead = 4" in captions
        assert len(at.get("vega_lite_chart")) == 2  # weights and mask, no heads row
    else:
        group = 4 // int(HEADS[heads])
        assert f"K/V head h // (nhead / nhead_kv) = h // {group} (read off this pass)" in captions
        assert f"K and V are (2, {HEADS[heads]}, 8, 4), (N, nhead_kv, M, d_k)" in captions
        table = at.table[-1].value
        assert list(table["query heads that read it"]) == GROUPS[heads]
        assert list(table.index) == [f"K/V head {g}" for g in range(int(HEADS[heads]))]
        row = json.loads(at.get("vega_lite_chart")[-1].proto.spec)["layer"][0]["data"]["values"]
        assert [cell["K/V head"] for cell in row] == [h // group for h in range(4)]


def test_a_decoder_only_model_over_the_budget_is_drawn_from_a_slim_pass():
    """A GPT-sized stack, over the budget for a whole pass: one sequence a layer at a time still draws its
    causal map, with the model's own weights."""
    link = {"arch": "decoder-only", "N": "1", "M": "16", "E": "1024", "nhead": "16", "nhead_kv": "4", "layers": "12",
            "vocab_size": "37000", "positional": "rope", "norm_first": "true", "norm": "rmsnorm"}
    at = open_page("attention", link)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("**A slim pass.**" in i.value and "only the layers up to the one shown" in i.value for i in at.info)
    at.selectbox(key="a_layer").set_value(11).run()
    at.selectbox(key="a_head").set_value(13).run()
    assert not at.exception, at.exception
    description, weights = drawn_weights(at)
    assert description.startswith("Heatmap of the causal self-attention weights of layer 11, head 13")
    assert all(weights[i][j] == 0 for i in range(16) for j in range(i + 1, 16))
    assert list(at.table[-1].value["query heads that read it"]) == ["0 to 3", "4 to 7", "8 to 11", "12 to 15"]


def test_llama_2_70b_shows_the_shape_of_its_maps_and_its_head_groups():
    """No values at these sizes, not even from a slim pass: the page says the weights' shape and why, and still
    shows Llama-2-70B's 8 K/V heads, each read by 8 query heads."""
    link = {"arch": "decoder-only", "N": "1", "M": "4096", "E": "8192", "nhead": "64", "nhead_kv": "8",
            "layers": "80", "d_ff": "28672", "vocab_size": "32000", "positional": "rope", "norm": "rmsnorm",
            "activation": "swiglu", "norm_first": "true", "bias": "false"}
    at = open_page("attention", link)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("Each causal self-attention layer's weights would be (1, 64, 4096, 4096)" in i.value for i in at.info)
    captions = " ".join(c.value for c in at.caption)
    assert "h // 8 (worked out from the config, as this pass computed no values)" in captions
    assert "K and V are (1, 8, 4096, 128)" in captions
    table = at.table[-1].value
    assert list(table["query heads that read it"]) == [f"{8 * g} to {8 * g + 7}" for g in range(8)]


def test_a_link_to_an_attention_the_family_does_not_have_falls_back_with_a_word():
    """kind=cross on a decoder-only model: there is no cross-attention, so the page shows its causal map and says so."""
    at = open_page("attention", {**LINK, "arch": "decoder-only", "kind": "cross"})
    assert not at.exception, at.exception
    warning = " ".join(w.value for w in at.main.warning).replace("\\", "")
    assert "kind='cross' is not one of causal; showing causal." in warning
    assert at.session_state["a_kind"] == "causal self-attention"
    assert drawn_weights(at)[0].startswith("Heatmap of the causal self-attention weights")
