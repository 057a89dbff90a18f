"""The attention page's views (core.views) for every family: its kinds, its maps and masks, and which query
heads share a K/V head."""

from __future__ import annotations

import pytest
import torch

from core import TransformerConfig, trace
from core.config import LLAMA2_70B
from core.views import (ATTENTION_KINDS, attention_kinds, attention_map, kv_sharing, slim_attention_maps,
                        weights_row)

FAMILIES = ("encoder-decoder", "decoder-only", "encoder-only")
HEADS = {"MHA": 4, "GQA": 2, "MQA": 1}


def config(arch: str, nhead_kv: int) -> TransformerConfig:
    return TransformerConfig(arch=arch, N=3, M=8, E=16, nhead=4, nhead_kv=nhead_kv, vocab_size=30, layers=2)


@pytest.mark.parametrize("arch", FAMILIES)
@pytest.mark.parametrize("name", HEADS)
def test_each_familys_maps_and_head_sharing(arch, name):
    cfg = config(arch, HEADS[name])
    t = trace(cfg)
    kinds = attention_kinds(cfg)
    assert list(kinds) == {"decoder-only": ["causal self-attention"], "encoder-only": ["self-attention"]}.get(
        arch, list(ATTENTION_KINDS))
    for kind in kinds:
        for head in range(cfg.nhead):
            a = attention_map(t, kind, 1, head, cfg.N - 1)
            weights = torch.tensor(a.weights)
            torch.testing.assert_close(weights.sum(dim=1), torch.ones(len(a.weights)))
            if kind in ("causal self-attention", "decoder masked self-attention"):
                assert torch.equal(weights.triu(1), torch.zeros_like(weights))  # nothing above the diagonal
                assert a.blocked == torch.ones(weights.shape, dtype=torch.bool).triu(1).tolist()
            else:  # the last sequence's last quarter is padding, hidden from every query
                assert all(row == [False] * 6 + [True] * 2 for row in a.blocked)
                assert weights[:, 6:].abs().max() == 0
    s = kv_sharing(t)
    assert (s.name, s.group, s.recorded or arch == "encoder-decoder") == (name, 4 // HEADS[name], True)
    assert s.kv_head == [h // s.group for h in range(4)]
    assert s.k_shape == (3, HEADS[name], 8, 4) and s.q_shape == (3, 4, 8, 4)  # (N, nhead_kv, M, d_k), (N, nhead, ..)
    assert [s.readers(g) for g in range(s.nhead_kv)] == [list(range(g * s.group, (g + 1) * s.group))
                                                          for g in range(s.nhead_kv)]


def test_heads_that_share_a_kv_head_read_the_same_keys():
    """The grouping is the model's: query heads 0 and 1 of a GQA model score against K/V head 0's keys,
    so their scores are their own queries times those keys, and head 2's are not."""
    cfg = TransformerConfig(arch="decoder-only", N=1, M=5, E=16, nhead=4, nhead_kv=2, vocab_size=30, layers=1)
    t = trace(cfg)
    q, k = t.tensors["dec.0.self_attn.q"], t.tensors["dec.0.self_attn.k"]  # (1, 4, 5, 4), (1, 2, 5, 4)
    scores = t.tensors["dec.0.self_attn.scores"]  # (1, 4, 5, 5), -inf above the diagonal
    below = ~torch.ones(5, 5, dtype=torch.bool).triu(1)
    for h, g in enumerate(kv_sharing(t).kv_head):
        mine = (q[0, h] @ k[0, g].T / 2)[below]  # sqrt(d_k) = 2
        torch.testing.assert_close(scores[0, h][below], mine)
    assert not torch.allclose((q[0, 2] @ k[0, 0].T / 2)[below], scores[0, 2][below])


def test_a_shape_only_trace_still_says_each_kinds_shape_and_the_grouping():
    """Llama-2-70B: no values, but the page still names the shape of its weights and its 8 groups of 8 heads."""
    t = trace(LLAMA2_70B)
    assert t.shape_only
    kind = next(iter(attention_kinds(LLAMA2_70B)))
    assert t.row(weights_row(kind, LLAMA2_70B)).shape == (1, 64, 4096, 4096)
    s = kv_sharing(t)
    assert (s.name, s.group, s.recorded, s.readers(7)) == ("GQA", 8, False, list(range(56, 64)))
    assert s.k_shape == (1, 8, 4096, 128)
    with pytest.raises(ValueError, match="shape-only"):
        attention_map(t, kind)


def test_a_kind_of_another_family_is_refused_with_this_ones():
    cfg = config("decoder-only", 2)
    with pytest.raises(ValueError, match="must be one of causal self-attention: the attentions of a decoder-only"):
        attention_map(trace(cfg), "cross-attention")
    with pytest.raises(ValueError, match="must be one of self-attention"):
        slim_attention_maps(config("encoder-only", 1), "encoder self-attention")


# --- The sliding window and latent attention: each layer's own mask, and maps for MLA ---------------------------

def test_a_windowed_layer_s_map_shows_its_band_and_a_full_layer_s_the_causal_mask():
    from core.config import TINY_LLAMA
    from core.model import sliding_window_mask
    cfg = TINY_LLAMA.replace(window=3, global_every=2)  # layer 0 windowed, layer 1 full
    t = trace(cfg)
    band = sliding_window_mask(8, 8, 3)  # (8, 8)
    assert band.tolist() == t.tensors["window_mask"].tolist()
    for head in range(cfg.nhead):
        windowed, full = (attention_map(t, "causal self-attention", layer, head, 1) for layer in (0, 1))
        assert windowed.blocked == band.tolist()
        assert full.blocked == torch.ones(8, 8, dtype=torch.bool).triu(1).tolist()
        assert windowed.blocked_weight_max == full.blocked_weight_max == 0.0
        w = torch.tensor(windowed.weights)
        torch.testing.assert_close(w.sum(dim=1), torch.ones(8))
        assert (w[band] == 0).all() and (w[~band] > 0).all()  # the band holds all of every row
        assert (torch.tensor(full.weights)[:, 0] > 0).all()  # a full layer's rows reach key 0
    slim = slim_attention_maps(cfg, "causal self-attention", 0, 1)
    assert slim[0].blocked == band.tolist()
    torch.testing.assert_close(torch.tensor(slim[0].weights), torch.tensor(attention_map(
        t, "causal self-attention", 0, 0, 1).weights))


def test_latent_attention_s_maps_are_one_per_head_under_the_causal_mask():
    from core.config import TINY_MLA
    t = trace(TINY_MLA)
    maps = [attention_map(t, "causal self-attention", 1, head, 0) for head in range(TINY_MLA.nhead)]
    for a in maps:
        assert a.blocked == torch.ones(8, 8, dtype=torch.bool).triu(1).tolist() and a.blocked_weight_max == 0.0
        torch.testing.assert_close(torch.tensor(a.weights).sum(dim=1), torch.ones(8))
    assert maps[0].weights != maps[1].weights  # each head its own map, though K and V share one latent
