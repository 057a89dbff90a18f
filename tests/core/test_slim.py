"""The slim pass (core.slim): one sequence's attention map, a layer at a time, equal to a whole pass's."""

from __future__ import annotations

import json
import re

import pytest
import torch

from core import PAPER_BIG, PRESETS, TransformerConfig, trace
from core.memory import DEFAULT_BUDGET_BYTES
from core.model import Transformer
from core.slim import MAX_SLIM_DRAWS, made_real, slim_attention, slim_bytes, slim_estimate
from core.views import ATTENTION_KINDS, attention_kinds, attention_map, slim_attention_maps
from tests.support.fresh_python import fresh_python

CONFIGS = [
    TransformerConfig(N=3, M=9, M_target=7, E=16, nhead=4, vocab_size=50, layers=3),  # the last item padded
    TransformerConfig(N=2, M=8, E=12, nhead=3, vocab_size=30, layers=2, tie_embeddings=True,
                      positional="learned", max_len=10, seed=7),
    TransformerConfig(N=2, M=40, M_target=5, E=256, nhead=4, vocab_size=300, layers=2, d_ff=1024),
]


@pytest.mark.parametrize("cfg", CONFIGS)
def test_each_block_made_real_gets_the_whole_models_weights(cfg):
    """Made real on its own, a block has exactly the values init_weights gives it in the whole model."""
    whole = dict(Transformer.from_config(cfg).named_parameters())
    model = Transformer.from_config(cfg, device="meta")
    tables = [[model.src_embed, model.positional]] + ([] if cfg.tie_embeddings else [[model.tgt_embed]])
    blocks = tables + [[b] for b in model.encoder] + [[b] for b in model.decoder]
    checked = 0
    with torch.inference_mode():
        for block in blocks:
            with made_real(model, cfg.seed, block):
                for module in block:
                    prefix = next(n for n, m in model.named_modules() if m is module)
                    for name, p in module.named_parameters():
                        assert p.device.type == "cpu"
                        assert torch.equal(p, whole[f"{prefix}.{name}" if prefix else name]), (prefix, name)
                        checked += 1
            assert all(p.device.type == "meta" for module in block for p in module.parameters())
    assert checked == sum(not name.startswith("generator.") for name in whole)  # all but the output layer's


@pytest.mark.parametrize("cfg", CONFIGS)
def test_every_map_equals_the_whole_traces(cfg):
    t = trace(cfg, shape_only=False)
    for kind in ATTENTION_KINDS:
        for layer in range(cfg.layers):
            for item in range(cfg.N):
                maps = slim_attention_maps(cfg, kind, layer, item)
                assert len(maps) == cfg.nhead
                for head, slim in enumerate(maps):
                    whole = attention_map(t, kind, layer, head, item)
                    assert (slim.kind, slim.layer, slim.head, slim.item) == (kind, layer, head, item)
                    assert (slim.queries, slim.keys, slim.hidden_beyond) == (whole.queries, whole.keys,
                                                                            whole.hidden_beyond)
                    assert (slim.blocked, slim.query_tokens, slim.key_tokens) == (whole.blocked, whole.query_tokens,
                                                                                 whole.key_tokens)
                    torch.testing.assert_close(torch.tensor(slim.weights), torch.tensor(whole.weights),
                                               rtol=0, atol=1e-6)


def test_the_recorded_tensors_have_one_sequences_shapes():
    cfg = CONFIGS[0]
    out = slim_attention(cfg, "dec", "cross_attn", 2, 1)
    assert {k: tuple(v.shape) for k, v in out.items()} == {
        "dec.2.cross_attn.weights": (1, 4, 7, 9), "src.tokens": (1, 9), "tgt.tokens": (1, 7),
        "src_key_padding_mask": (1, 9), "tgt_mask": (7, 7)}
    # One sequence's ids, not views that keep the whole batch's alive (N = 4096 held 64 MiB of them).
    assert out["src.tokens"].untyped_storage().nbytes() == 8 * cfg.M
    assert out["tgt.tokens"].untyped_storage().nbytes() == 8 * cfg.M_target


def test_bad_requests_and_configs_over_budget_raise_value_error():
    cfg = CONFIGS[0]
    for args, words in [(("enc", "cross_attn", 0, 0), "not an attention of this model"),
                        (("dec", "ffn", 0, 0), "not an attention of this model"),
                        (("enc", "self_attn", 3, 0), "layer=3 is out of range: this config has 3 (0 to 2)"),
                        (("enc", "self_attn", 0, -1), "item=-1 is out of range")]:
        with pytest.raises(ValueError, match=re.escape(words)):
            slim_attention(cfg, *args)
    with pytest.raises(ValueError, match="over the budget of 1000; only a shape-only trace fits"):
        slim_attention(cfg, "enc", "self_attn", 0, 0, budget_bytes=1000)
    deep = PAPER_BIG.replace(layers=24)  # 160 MiB a layer at a time, but 743 million weights to draw
    assert slim_estimate(deep).total <= DEFAULT_BUDGET_BYTES and slim_estimate(deep).draws > MAX_SLIM_DRAWS
    assert slim_estimate(deep).over(DEFAULT_BUDGET_BYTES)
    with pytest.raises(ValueError, match=re.escape("draws up to 743,317,504 weights, more than MAX_SLIM_DRAWS")):
        slim_attention(deep, "enc", "self_attn", 0, 0)


def test_the_estimate_counts_the_weights_drawn_and_the_batchs_ids():
    """draws: every weight but the output layer's, a tied table once; ids: make_batch's whole batch."""
    for cfg in CONFIGS:
        est = slim_estimate(cfg)
        assert est.draws == sum(p.numel() for name, p in Transformer.from_config(cfg, device="meta").named_parameters()
                                if not name.startswith("generator."))
        assert est.ids == 8 * cfg.N * (cfg.M + cfg.M_target)
        assert est.total == max(est.tables, est.layer) + est.maps + est.rest + est.ids == slim_bytes(cfg)


def test_which_presets_the_slim_pass_opens():
    """The paper's big model is over the budget for a whole pass and within it for a slim one; the
    shape-only sizes of GPT-2, Llama 2 and GPT-3 stay out of reach (their maps alone are too big)."""
    assert PAPER_BIG in PRESETS.values()
    assert not slim_estimate(PAPER_BIG).over(DEFAULT_BUDGET_BYTES) and trace(PAPER_BIG).shape_only
    for name, cfg in PRESETS.items():
        if "shape only" in name:
            assert slim_bytes(cfg) > DEFAULT_BUDGET_BYTES, name


PEAK = """
import json, resource
from dataclasses import replace
from core import TransformerConfig
from core.config import PAPER_BIG
from core.slim import slim_attention, slim_bytes
cfg = {cfg}
block = "cross_attn" if cfg.arch == "encoder-decoder" else "self_attn"  # the deepest map
warm = cfg.replace(N=1, E=16, nhead=2, nhead_kv=1, vocab_size=50, layers=1, d_ff=32)
slim_attention(warm, "dec", block, 0, 0)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
slim_attention(cfg, "dec", block, cfg.layers - 1, 0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps([peak - before, slim_bytes(cfg)]))
"""


@pytest.mark.parametrize("cfg", [
    "replace(PAPER_BIG, M=16, tie_embeddings=True)",
    "replace(PAPER_BIG, M=64, tie_embeddings=False)",
    "TransformerConfig(N=4096, M=1024, E=8, nhead=1, vocab_size=10, layers=1)",  # the batch's ids dominate
    "TransformerConfig(arch='decoder-only', N=1, M=64, E=1024, nhead=16, nhead_kv=4, layers=12, vocab_size=37000, "
    "positional='rope', norm_first=True, norm='rmsnorm', activation='swiglu')",
])
def test_a_slim_pass_stays_within_its_estimate(cfg):
    """Measured as the process's peak resident memory, in a fresh interpreter, after a small pass has
    loaded what a first pass loads: the deepest map, which builds every layer in turn, grows the process
    by no more than ``slim_bytes`` says. (Its layers once came from the C heap weight by weight and grew
    it by 32 MiB each; and the sequence's ids, views of the whole batch's, kept 64 MiB of them alive.)"""
    grown, estimated = json.loads(fresh_python(PEAK.format(cfg=cfg)))
    assert grown <= estimated, (grown / 2**20, estimated / 2**20)


FAMILIES = [
    TransformerConfig(arch="decoder-only", N=2, M=7, E=16, nhead=4, nhead_kv=2, vocab_size=30, layers=2,
                      positional="rope", norm="rmsnorm", activation="swiglu", norm_first=True, bias=False),
    TransformerConfig(arch="decoder-only", N=2, M=6, E=12, nhead=3, nhead_kv=1, vocab_size=30, layers=2,
                      positional="learned", activation="gelu", norm_first=True, tie_embeddings=True, seed=3),
    TransformerConfig(arch="encoder-only", N=3, M=9, E=16, nhead=4, nhead_kv=1, vocab_size=30, layers=2,
                      positional="rope", activation="gelu"),  # the last item padded
    TransformerConfig(arch="encoder-only", N=2, M=8, E=8, nhead=2, vocab_size=30, layers=2, positional="none",
                      norm_first=True),
    TransformerConfig(N=2, M=9, M_target=5, E=16, nhead=4, nhead_kv=2, vocab_size=30, layers=2, positional="rope",
                      norm_first=True, norm="rmsnorm"),  # RoPE turns the decoder by M_target's positions
    # T5's parts: each stack's layer 0 makes the bias every deeper layer reads
    TransformerConfig(N=2, M=9, M_target=5, E=16, nhead=4, vocab_size=30, layers=3, positional="relative",
                      relative_buckets=8, relative_max_distance=12, norm="rmsnorm", norm_first=True, bias=False,
                      tie_embeddings=True, scale_scores=False, scale_embeddings=False),
    TransformerConfig(arch="decoder-only", N=1, M=7, E=8, nhead=2, vocab_size=30, layers=2, positional="relative",
                      relative_buckets=6, relative_max_distance=9),
]


@pytest.mark.parametrize("cfg", FAMILIES, ids=lambda cfg: f"{cfg.arch}-kv{cfg.nhead_kv}-{cfg.positional}")
def test_every_familys_maps_equal_the_whole_traces(cfg):
    """Decoder-only, encoder-only, pre-norm, RoPE, grouped K/V heads: each of the model's own attentions
    (and none other) comes out of a slim pass as the whole pass records it."""
    t = trace(cfg, shape_only=False)
    assert list(attention_kinds(cfg)) == {"decoder-only": ["causal self-attention"],
                                          "encoder-only": ["self-attention"]}.get(cfg.arch, list(ATTENTION_KINDS))
    for kind in attention_kinds(cfg):
        for layer in range(cfg.layers):
            for item in range(cfg.N):
                for head, slim in enumerate(slim_attention_maps(cfg, kind, layer, item)):
                    whole = attention_map(t, kind, layer, head, item)
                    assert (slim.blocked, slim.query_tokens, slim.key_tokens, slim.hidden_beyond) == (
                        whole.blocked, whole.query_tokens, whole.key_tokens, whole.hidden_beyond)
                    torch.testing.assert_close(torch.tensor(slim.weights), torch.tensor(whole.weights),
                                               rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="is not an attention of this model"):
        missing = {"decoder-only": ("enc", "self_attn"), "encoder-only": ("dec", "self_attn")}
        slim_attention(cfg, *missing.get(cfg.arch, ("enc", "cross_attn")), 0, 0)


def test_a_slim_estimate_counts_each_familys_largest_layer():
    """A single stack's layer has one attention (with nhead_kv K/V heads) and no cross-attention; SwiGLU's
    FFN has three matrices: the largest layer's bytes are an upper bound of the real layer's, and close."""
    for cfg in FAMILIES:
        model = Transformer.from_config(cfg, device="meta")
        stack = model.decoder if model.decoder is not None else model.encoder
        real = 4 * sum(p.numel() for p in stack[0].parameters())
        assert real <= slim_estimate(cfg).layer <= real + 4 * 3 * 2 * cfg.E, cfg
