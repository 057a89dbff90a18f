"""The Attention page for the new parts, opened by a link as a learner would: a windowed layer's band mask and the
map under it, a windowed and a full layer side by side, and latent attention's map with its note on K and V."""

from __future__ import annotations

import json

import torch

from core import trace
from core.config import TINY_LLAMA, TINY_MLA, TINY_MOE
from core.model import sliding_window_mask
from core.views import attention_map
from tests.support.apptest import open_page, running
from tests.support.links import config_link

ALTERNATING = TINY_LLAMA.replace(window=3, global_every=2, layers=4)  # layers 0 and 2 windowed, 1 and 3 full


def charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def cells(spec: dict, value: str) -> list[list]:
    """A heatmap's cells as rows of queries, each cell's ``value`` (weight, or the mask's state)."""
    data = spec["layer"][0]["data"]["values"] if "layer" in spec else spec["data"]["values"]
    rows = [[None] * (1 + max(c["key"] for c in data)) for _ in range(1 + max(c["query"] for c in data))]
    for c in data:
        rows[c["query"]][c["key"]] = c[value]
    return rows


def clean(at) -> None:
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert not at.warning, [w.value for w in at.warning]  # the link was read as written


def test_a_windowed_layer_shows_its_band_mask_and_the_weights_under_it_beside_a_full_layer():
    at = open_page("attention", {**config_link(ALTERNATING), "layer": "2", "head": "1", "item": "1"})
    clean(at)
    assert running(at) == ALTERNATING
    t = trace(ALTERNATING)
    weights, mask, windowed, full = charts(at)[:4]
    band = sliding_window_mask(8, 8, 3).tolist()  # (M, M)
    assert cells(mask, "state") == [["blocked (True)" if b else "visible" for b in row] for row in band]
    expected = attention_map(t, "causal self-attention", 2, 1, 1)
    torch.testing.assert_close(torch.tensor(cells(weights, "weight")), torch.tensor(expected.weights))
    assert any(c.value.startswith("Sliding-window mask, W = 3: True where blocked.") for c in at.caption)
    assert [h.value for h in at.main.header][:3] == ["Weights", "Mask", "A windowed and a full layer"]
    assert [h.value for h in at.main.subheader] == ["Layer 2, windowed", "Layer 1, full"]  # the nearest full layer
    torch.testing.assert_close(torch.tensor(cells(windowed, "weight")), torch.tensor(expected.weights))
    torch.testing.assert_close(torch.tensor(cells(full, "weight")),
                               torch.tensor(attention_map(t, "causal self-attention", 1, 1, 1).weights))
    assert any(c.value.startswith("Head 1 of sequence 1, in layer 2 (windowed, W = 3) and in layer 1 (full")
               for c in at.caption)


def test_a_full_layer_of_a_windowed_model_says_it_has_no_window():
    at = open_page("attention", {**config_link(ALTERNATING), "layer": "3"})
    clean(at)
    mask = charts(at)[1]
    assert cells(mask, "state") == [["blocked (True)" if j > i else "visible" for j in range(8)] for i in range(8)]
    assert any(c.value.startswith("Causal mask: True above the diagonal. Layer 3 has no window") for c in at.caption)
    assert [h.value for h in at.main.subheader] == ["Layer 2, windowed", "Layer 3, full"]


def test_a_window_in_every_layer_draws_no_pair():
    cfg = TINY_LLAMA.replace(window=3)
    at = open_page("attention", config_link(cfg))
    clean(at)
    assert "A windowed and a full layer" not in [h.value for h in at.main.header]
    assert any(c.value.startswith("Sliding-window mask, W = 3") for c in at.caption)


def test_latent_attention_draws_one_head_s_map_and_says_its_k_and_v_came_from_the_latent():
    at = open_page("attention", {**config_link(TINY_MLA), "head": "1", "item": "0"})
    clean(at)
    assert running(at) == TINY_MLA
    weights = charts(at)[0]
    expected = attention_map(trace(TINY_MLA), "causal self-attention", 0, 1, 0)
    torch.testing.assert_close(torch.tensor(cells(weights, "weight")), torch.tensor(expected.weights))
    assert any(c.value.startswith("Head 1's K and V were made back from the shared latent c_KV (2, 8, 8)")
               for c in at.caption)
    assert "K and V from the latent" in [h.value for h in at.main.header] and "K/V heads" not in [h.value for h in at.main.header]
    assert not [h for h in at.main.header if h.value.startswith("A windowed")]


def test_a_mixture_of_experts_keeps_the_plain_attention_page():
    at = open_page("attention", config_link(TINY_MOE))
    clean(at)
    assert [h.value for h in at.main.header] == ["Weights", "Mask", "K/V heads"]
