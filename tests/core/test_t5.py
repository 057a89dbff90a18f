"""T5: its config fields, its relative position buckets and bias, its counts against the published figures and
Hugging Face's model on the meta device, and its logits against Hugging Face's T5ForConditionalGeneration on tiny
random configs with copied weights. Dev-only: transformers."""

import pytest
import torch
import transformers
from torch import nn

from core import Transformer, TransformerConfig, estimate, generate_key_padding_mask, generate_square_subsequent_mask
from core import param_counts, trace
from core.config import T5_BASE, T5_MODELS, T5_SMALL, TINY_T5
from core.positions import relative_position_bucket
from core.rows import formula_shape
from tests.support.hf_t5 import copy_into_hf, hf_config

PUBLISHED = {"T5-small": 60_506_624, "T5-base": 222_903_552}


PARITY = [
    TINY_T5,
    TINY_T5.replace(N=3, M=11, M_target=6, E=24, nhead=3, layers=3, d_ff=40, vocab_size=61, relative_buckets=6,
                    relative_max_distance=9, seed=4),
    TINY_T5.replace(N=1, M=40, M_target=33, E=8, nhead=4, layers=1, d_ff=12, vocab_size=20, relative_buckets=32,
                    relative_max_distance=20, seed=9),
]


@pytest.mark.parametrize("cfg", PARITY, ids=["tiny", "odd-sizes-padded", "long-offsets"])
@torch.no_grad()
def test_logits_match_hugging_face_t5_with_copied_weights(cfg):
    ours = Transformer.from_config(cfg).eval()
    gen = torch.Generator().manual_seed(cfg.seed)
    for name, p in ours.named_parameters():
        if "norm" in name:
            p.copy_(1 + 0.5 * torch.randn(p.shape, generator=gen))  # gains away from 1, so a swapped norm shows
    hf = transformers.T5ForConditionalGeneration(hf_config(cfg)).eval()
    copy_into_hf(ours, hf)
    src = torch.randint(1, cfg.vocab_size, (cfg.N, cfg.M), generator=gen)  # (N, M)
    tgt = torch.randint(1, cfg.vocab_size, (cfg.N, cfg.M_target), generator=gen)  # (N, M_target)
    if cfg.N > 1:
        src[-1, -3:] = 0  # padding the last source sequence: its keys are blocked on both sides
    padding = generate_key_padding_mask(src)  # (N, M)
    logits = ours(src, tgt, tgt_mask=generate_square_subsequent_mask(cfg.M_target), src_key_padding_mask=padding,
                  memory_key_padding_mask=padding)  # (N, M_target, vocab_size)
    want = hf(input_ids=src, attention_mask=(~padding).long(), decoder_input_ids=tgt).logits
    torch.testing.assert_close(logits, want, atol=1e-4, rtol=1e-4)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())


def test_the_scales_are_where_t5_puts_them():
    """Neither sqrt(E) on the embeddings nor 1/sqrt(d_k) on the scores; the decoder output times 1/sqrt(E)."""
    model = Transformer.from_config(TINY_T5)
    assert not model.src_embed.scale and model.tgt_embed is model.src_embed
    assert model.generator.weight is model.src_embed.lookup.weight and model.generator.bias is None
    assert model.output_scale == TINY_T5.E ** -0.5
    assert not model.encoder[0].self_attn.scale and not model.decoder[0].cross_attn.scale
    untied = Transformer.from_config(TINY_T5.replace(tie_embeddings=False))
    assert untied.output_scale is None  # T5 v1.1: separate output layer, nothing scaled
    assert Transformer.from_config(TransformerConfig()).output_scale is None


@pytest.mark.parametrize("name", list(T5_MODELS))
def test_t5_counts_equal_the_published_figure_and_hugging_faces(name):
    cfg = T5_MODELS[name]
    t = trace(cfg)
    assert t.shape_only  # over the memory budget: the meta device
    with torch.device("meta"):
        hf = transformers.T5ForConditionalGeneration(hf_config(cfg))
    assert t.params["total"] == PUBLISHED[name] == param_counts(cfg)["total"] == sum(p.numel() for p in hf.parameters())
    assert t.params == param_counts(cfg)
    assert t.params["positional table"] == 2 * cfg.relative_buckets * cfg.nhead


@pytest.mark.parametrize("changes", [dict(E=384, layers=8, nhead=6, d_ff=1024), dict(E=1024, nhead=16, layers=24, d_ff=4096),
                                     dict(relative_buckets=64, relative_max_distance=40, vocab_size=1000)])
def test_other_t5_sizes_count_as_hugging_face_does(changes):
    cfg = T5_SMALL.replace(**changes)
    with torch.device("meta"):
        hf = transformers.T5ForConditionalGeneration(hf_config(cfg))
    live = sum(p.numel() for p in Transformer.from_config(cfg, device="meta").parameters())
    assert live == param_counts(cfg)["total"] == sum(p.numel() for p in hf.parameters())


def test_t5_base_has_twelve_heads_of_64():
    assert (T5_BASE.E, T5_BASE.nhead, T5_BASE.d_k, T5_BASE.layers) == (768, 12, 64, 12)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("buckets, distance", [(32, 128), (8, 16), (6, 9), (4, 3)])
def test_buckets_match_hugging_faces(bidirectional, buckets, distance):
    offset = torch.arange(-300, 301)[None, :] - torch.arange(5)[:, None]  # (5, 601)
    want = transformers.models.t5.modeling_t5.T5Attention._relative_position_bucket(
        offset, bidirectional=bidirectional, num_buckets=buckets, max_distance=distance)
    assert torch.equal(relative_position_bucket(offset, bidirectional, buckets, distance), want)


def test_a_max_distance_within_the_exact_buckets_puts_every_larger_distance_in_the_last():
    """Hugging Face's log scale divides by log(max_distance / exact), 0 or less there; ours has no scale to draw."""
    offset = torch.arange(-20, 21)  # (41,)
    causal = relative_position_bucket(offset, False, 32, 16)  # 16 exact distances, max_distance 16
    assert causal[:5].tolist() == [31] * 5 and causal[20 - 15:21].tolist() == list(range(15, -1, -1))
    both = relative_position_bucket(offset, True, 32, 3)  # 8 exact distances a side
    assert both[0].item() == 15 and both[-1].item() == 31 and both[20 + 7].item() == 16 + 7
    assert torch.equal(relative_position_bucket(offset, True, 4, 1), (offset > 0) * 2 + (offset != 0))


def test_the_table_sits_in_each_stacks_first_layer_and_serves_every_layer():
    model = Transformer.from_config(TINY_T5)
    assert [layer.relative is not None for layer in model.encoder] == [True, False]
    assert [layer.relative is not None for layer in model.decoder] == [True, False]
    assert model.encoder[0].relative.bidirectional and not model.decoder[0].relative.bidirectional
    assert model.encoder[0].relative.table.weight.shape == (TINY_T5.relative_buckets, TINY_T5.nhead)
    t = trace(TINY_T5)
    bias, buckets = t.tensors["enc.relative_bias"], t.tensors["enc.relative_buckets"]
    table = model.encoder[0].relative.table.weight.detach()
    assert torch.equal(bias, table[buckets].permute(2, 0, 1))  # (nhead, M, M)
    # Every layer of a stack adds its first layer's bias to q·kᵀ, with no 1/sqrt(d_k).
    rec: dict[str, torch.Tensor] = {}
    src = torch.randint(1, TINY_T5.vocab_size, (TINY_T5.N, TINY_T5.M), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        model(src, src, tgt_mask=generate_square_subsequent_mask(TINY_T5.M), rec=rec)
    for stack in ("enc", "dec"):
        for i in range(TINY_T5.layers):
            a = f"{stack}.{i}.self_attn."
            want = rec[a + "q"] @ rec[a + "k"].transpose(-2, -1) + rec[f"{stack}.relative_bias"]  # (N, nhead, M, M)
            if stack == "dec":
                want = want.masked_fill(generate_square_subsequent_mask(TINY_T5.M), float("-inf"))
            torch.testing.assert_close(rec[a + "scores"], want)
    cross = rec["dec.0.cross_attn.scores"]  # no bias: q·kᵀ alone
    torch.testing.assert_close(cross, rec["dec.0.cross_attn.q"] @ rec["dec.0.cross_attn.k"].transpose(-2, -1))
    causal_buckets = t.tensors["dec.relative_buckets"]
    assert causal_buckets.triu(1).eq(0).all()  # later keys (masked) fall in bucket 0
    assert torch.equal(causal_buckets.diagonal(), torch.zeros(TINY_T5.M_target, dtype=torch.long))


def test_rows_carry_the_bias_and_the_buckets_at_their_formula():
    for cfg in (TINY_T5, TINY_T5.replace(M=5, M_target=9), TINY_T5.replace(arch="decoder-only", M_target=None),
                TINY_T5.replace(arch="encoder-only", M_target=None, M=13)):
        t = trace(cfg)
        keys = [r.key for r in t.rows]
        assert "relative_buckets" in keys and "relative_bias" in keys and "positional_encoding" not in keys
        assert [r.index for r in t.rows] == list(range(1, len(t.rows) + 1))
        for r in t.rows + t.extras:
            assert r.shape == formula_shape(r.formula, cfg), (cfg, r.key)
        assert t.row("relative_bias").shape == (cfg.nhead, cfg.M, cfg.M)
        assert t.row("relative_buckets").shape == (cfg.M, cfg.M)
        assert "RelativePositionBias.forward" in t.row("relative_bias").code  # the explorer's code view
        shape_only = trace(cfg, shape_only=True)
        assert [r.shape for r in shape_only.rows] == [r.shape for r in t.rows]


def kept_bytes(cfg: TransformerConfig) -> int:
    t = trace(cfg)
    return sum({x.untyped_storage().data_ptr(): x.untyped_storage().nbytes() for x in t.tensors.values()}.values())


def test_the_estimate_counts_exactly_what_a_t5_trace_keeps():
    for cfg in (TINY_T5, TINY_T5.replace(M=5, M_target=9, layers=3, nhead=4), T5_SMALL.replace(M=6, M_target=3, E=32,
                                                                                                 vocab_size=50)):
        assert kept_bytes(cfg) == estimate(cfg).activations, cfg
    # A single stack's buckets and bias, (M, M) and (nhead, M, M), are what it keeps beyond a model without positions.
    one = TINY_T5.replace(arch="decoder-only", M_target=None, M=6, nhead=4)
    extra = kept_bytes(one) - kept_bytes(one.replace(positional="none"))
    assert extra == estimate(one).activations - estimate(one.replace(positional="none")).activations
    assert extra == 8 * one.M ** 2 + 4 * one.nhead * one.M ** 2


@torch.no_grad()
def test_a_cached_decoder_gives_the_full_passs_logits():
    """The decoder's buckets at a KV cache's later positions: queries start after the cached keys."""
    cfg = TINY_T5.replace(arch="decoder-only", M_target=None, M=7)
    model = Transformer.from_config(cfg)
    ids = torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M), generator=torch.Generator().manual_seed(1))  # (N, M)
    full = model(None, ids, tgt_mask=generate_square_subsequent_mask(cfg.M))  # (N, M, vocab_size)
    cache = [{} for _ in range(cfg.layers)]
    first = model(None, ids[:, :4], tgt_mask=generate_square_subsequent_mask(4), cache=cache)
    steps = [model(None, ids[:, p:p + 1], cache=cache) for p in range(4, cfg.M)]
    torch.testing.assert_close(torch.cat([first, *steps], dim=1), full, atol=1e-5, rtol=1e-5)


def test_t5_fields_are_checked_with_a_way_out():
    with pytest.raises(ValueError, match=r"relative_buckets=2 is out of range: it must be between 4 and 1024; two a"):
        TransformerConfig(relative_buckets=2)
    with pytest.raises(ValueError, match=r"relative_max_distance=0 is out of range: it must be between 1 and"):
        TransformerConfig(relative_max_distance=0)
    with pytest.raises(ValueError, match=r"scale_scores='no' must be True or False"):
        TransformerConfig(scale_scores="no")
    with pytest.raises(ValueError, match=r"scale_embeddings=0 must be True or False"):
        TransformerConfig(scale_embeddings=0)
    assert TransformerConfig().relative_buckets == 32 and TransformerConfig().relative_max_distance == 128
    assert TransformerConfig().scale_scores and TransformerConfig().scale_embeddings


def test_a_default_models_layers_have_no_table_and_keep_their_scales():
    model = Transformer.from_config(TransformerConfig())
    assert all(layer.relative is None for layer in [*model.encoder, *model.decoder])
    assert model.src_embed.scale and model.encoder[0].self_attn.scale
    assert sum(isinstance(m, nn.Embedding) for m in model.modules()) == 2
