"""The KV cache: at every step the cached logits equal a full pass over the same tokens, for multi-head,
grouped-query and multi-query attention and RoPE; the cache grows as (N, nhead_kv, M + t, d_k)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from core import TransformerConfig
from core.config import LLAMA2_70B
from core.kv_cache import generate
from core.memory import kv_cache_bytes
from core.model import Transformer, generate_square_subsequent_mask

BASE = TransformerConfig(arch="decoder-only", N=2, M=5, E=16, nhead=4, layers=3, vocab_size=40, seed=2,
                         max_len=12)


@pytest.mark.parametrize("parts", [
    {"nhead_kv": 4}, {"nhead_kv": 2}, {"nhead_kv": 1},  # MHA, GQA, MQA
    {"nhead_kv": 2, "positional": "rope", "norm": "rmsnorm", "activation": "swiglu", "norm_first": True,
     "bias": False},
    {"positional": "learned", "norm_first": True, "activation": "gelu"},
])
def test_cached_logits_equal_a_full_pass_at_every_step(parts):
    cfg, G = BASE.replace(**parts), 6
    model = Transformer.from_config(cfg)
    out = generate(cfg, G, model)
    assert out.tokens.shape == (cfg.N, cfg.M + G) and len(out.step_logits) == G + 1
    with torch.inference_mode():
        for t, cached in enumerate(out.step_logits):
            seen = out.tokens[:, :cfg.M + t]  # (N, M + t)
            full = model(None, seen, tgt_mask=generate_square_subsequent_mask(cfg.M + t))[:, -1]  # (N, vocab_size)
            torch.testing.assert_close(cached, full, atol=1e-5, rtol=1e-5)
            grown = (cfg.N, cfg.nhead_kv, cfg.M + t, cfg.d_k)
            assert out.cache_shapes[t] == ((grown, grown),) * cfg.layers


def test_cache_memory_is_2_layers_N_nhead_kv_positions_d_k_bytes():
    cfg = BASE.replace(nhead_kv=2)
    assert kv_cache_bytes(cfg, G=3) == 2 * 3 * 2 * 2 * (5 + 3) * 4 * 4
    assert kv_cache_bytes(cfg, G=3, nhead_kv=cfg.nhead) == 2 * kv_cache_bytes(cfg, G=3)  # MHA's figure
    # Llama-2-70B at N=1, M=4096, fp16: 1.25 GiB with its 8 K/V heads, 10 GiB with 64.
    assert kv_cache_bytes(LLAMA2_70B, bytes_per_number=2) == 80 * 2**24
    assert kv_cache_bytes(LLAMA2_70B, bytes_per_number=2, nhead_kv=64) == 8 * 80 * 2**24


def test_the_trace_shows_the_prompts_cache_as_the_generation_fills_it():
    from core import trace
    cfg = BASE.replace(nhead_kv=1)
    t = trace(cfg)
    assert t.row("kv_cache").shape == (3, 2, 2, 1, 5, 4)
    torch.testing.assert_close(t.tensors["kv_cache"][0, 0], t.tensors["dec.0.self_attn.k"])
    assert t.row("kv_cache").bytes == kv_cache_bytes(cfg)


def test_generate_refuses_what_it_cannot_do():
    with pytest.raises(ValueError, match="arch='encoder-decoder' does not generate"):
        generate(TransformerConfig(), 2)
    with pytest.raises(ValueError, match="G=-1"):
        generate(BASE, -1)
    with pytest.raises(ValueError, match="longer than the learned positional table"):
        generate(BASE.replace(positional="learned", max_len=6), 3)


def test_cli_json_reports_the_prompts_kv_cache_for_a_decoder_only_model():
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-m", "core", "--arch", "decoder-only", "--N", "3", "--M", "7", "--E", "16",
                          "--nhead", "4", "--nhead-kv", "2", "--layers", "2", "--json"],
                         cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    kv = json.loads(out.stdout)["kv_cache"]
    numbers = 2 * 2 * 3 * 2 * 7 * 4  # 2 · layers · N · nhead_kv · M · d_k
    per_token = 2 * 2 * 2 * 4  # 2 · layers · nhead_kv · d_k: one more position of one sequence
    assert kv == {"shape": [2, 2, 3, 2, 7, 4], "bytes": numbers * 4, "bytes_fp16": numbers * 2,
                  "bytes_mha": 2 * numbers * 4, "bytes_per_token": per_token * 4, "bytes_per_token_fp16": per_token * 2}
    plain = subprocess.run([sys.executable, "-m", "core", "--json"], cwd=root, capture_output=True, text=True,
                           timeout=120)
    assert "kv_cache" not in json.loads(plain.stdout)
