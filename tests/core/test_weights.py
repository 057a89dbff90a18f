"""Seeded weights (core.weights): the same seed gives the same model, tied tables stay tied, and no
session's draws touch the global random stream another session reads."""

import pytest
import torch

from core import Transformer, TransformerConfig
from core.model import MultiHeadAttention
from core.weights import blocks, seeded

CFG = TransformerConfig(N=2, M=6, E=12, nhead=3, vocab_size=40, layers=2, positional="learned")


def test_a_seed_gives_the_same_weights_and_another_seed_others():
    a, b = Transformer.from_config(CFG), Transformer.from_config(CFG)
    c = Transformer.from_config(CFG.replace(seed=1))
    for (name, p), q, r in zip(a.named_parameters(), b.parameters(), c.parameters()):
        assert torch.equal(p, q), name
        if "norm" not in name:  # LayerNorm gains and biases start at 1 and 0 whatever the seed
            assert not torch.equal(p, r), name


def test_tied_embeddings_stay_one_matrix():
    model = Transformer.from_config(CFG.replace(tie_embeddings=True))
    assert model.tgt_embed is model.src_embed
    assert model.generator.weight is model.src_embed.lookup.weight
    untied = Transformer.from_config(CFG)
    assert untied.generator.weight is not untied.tgt_embed.lookup.weight


def test_spreads_are_pytorchs_for_linear_layers_and_unit_sized_for_embedded_tokens():
    model = Transformer.from_config(CFG.replace(E=64, nhead=4, vocab_size=5000, max_len=4000))
    W = model.encoder[0].self_attn.W_q.weight  # (E, E)
    assert W.abs().max() <= 1 / 64 ** 0.5
    assert model.decoder[0].norm1.weight.eq(1).all() and model.decoder[0].norm1.bias.eq(0).all()
    tokens = model.src_embed(torch.arange(5000)[None])  # (1, vocab_size, E): scaled by sqrt(E)
    assert tokens.std().item() == pytest.approx(1.0, abs=0.02)
    assert model.positional.table.std().item() == pytest.approx(1.0, abs=0.02)  # the sinusoids' size


def test_stacked_experts_get_each_experts_own_linear_spread_and_the_seed_fixes_them():
    """Expert e's slices are drawn as its own nn.Linear's would be: within 1/sqrt(E) going in, 1/sqrt(d_ff_expert)
    coming out, biases alike; the same seed gives the same experts."""
    cfg = TransformerConfig(arch="decoder-only", N=1, M=4, E=64, nhead=4, vocab_size=30, layers=1, n_experts=4,
                            top_k=2, d_ff_expert=16, activation="swiglu")
    experts = Transformer.from_config(cfg).decoder[0].ffn.experts
    for name in ("W_gate", "W_up", "b_gate", "b_up"):
        assert 0.9 / 64 ** 0.5 < getattr(experts, name).abs().max() <= 1 / 64 ** 0.5, name
    for name in ("W_down", "b_down"):
        assert 0.9 / 16 ** 0.5 < getattr(experts, name).abs().max() <= 1 / 16 ** 0.5, name
    again = Transformer.from_config(cfg).decoder[0].ffn.experts
    other = Transformer.from_config(cfg.replace(seed=1)).decoder[0].ffn.experts
    assert torch.equal(experts.W_down, again.W_down) and not torch.equal(experts.W_down, other.W_down)


def test_building_draws_nothing_from_the_global_stream():
    state = torch.get_rng_state()
    Transformer.from_config(CFG)
    seeded(MultiHeadAttention, 8, 2, seed=3)
    assert torch.equal(state, torch.get_rng_state())


def test_every_layer_is_a_block_of_its_own():
    model = Transformer.from_config(CFG, device="meta")
    assert blocks(model) == [model.src_embed, model.tgt_embed, model.positional, *model.encoder, *model.decoder,
                             model.generator]
