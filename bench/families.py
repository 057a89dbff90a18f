"""Benchmark: the architecture families against the models learners would otherwise build.

All in one process, warm (one untimed round first), interleaved (who goes first alternates), so that
machine noise hits both sides alike; it prints each side's median and the median of per-round ratios
ours / reference (target <= 1.0).

  llama-70b   core.trace of Llama-2-70B (N 1, M 4096), shape-only on the meta device, against building
              Hugging Face's LlamaForCausalLM at the same sizes on the meta device and running its forward.
  family      a small core.trace of each family (live, on the CPU, seeded weights, every row recorded)
              against building the matching reference and running it once under no_grad:
              encoder-decoder: torch.nn.Transformer with embeddings and an output layer;
              decoder-only: Hugging Face's GPT2LMHeadModel and LlamaForCausalLM;
              encoder-only: torch.nn.TransformerEncoder with an embedding and an output layer, and Hugging
              Face's BertForMaskedLM.
  cli         `python -m core --json` at Llama-3-8B's sizes in a fresh process (target < 4 s).

    python bench/families.py [--repeats 9] [--threads 1]

PyTorch runs on ``--threads`` threads, one by default as in the app (core.views.limit_torch_threads).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import torch
import transformers
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout, without installing

from core import TransformerConfig, trace  # noqa: E402
from core.config import LLAMA2_70B, LLAMA3_8B  # noqa: E402

RATIO_TARGET = 1.0
CLI_TARGET_S = 4.0


def llama_config(cfg: TransformerConfig) -> transformers.LlamaConfig:
    return transformers.LlamaConfig(hidden_size=cfg.E, intermediate_size=cfg.d_ff, num_hidden_layers=cfg.layers,
                                    num_attention_heads=cfg.nhead, num_key_value_heads=cfg.nhead_kv,
                                    vocab_size=cfg.vocab_size, max_position_embeddings=cfg.M)


def hf_llama_meta(cfg: TransformerConfig) -> Callable[[], object]:
    def run():
        with torch.device("meta"), torch.inference_mode():
            model = transformers.LlamaForCausalLM(llama_config(cfg))
            return model(torch.zeros(cfg.N, cfg.M, dtype=torch.long)).logits  # (N, M, vocab_size)
    return run


def hf_llama(cfg: TransformerConfig) -> Callable[[], object]:
    def run():
        model = transformers.LlamaForCausalLM(llama_config(cfg)).eval()
        with torch.no_grad():
            return model(torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M))).logits.softmax(-1)
    return run


def hf_gpt2(cfg: TransformerConfig) -> Callable[[], object]:
    def run():
        model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
            n_embd=cfg.E, n_layer=cfg.layers, n_head=cfg.nhead, n_inner=cfg.d_ff, n_positions=cfg.max_len,
            vocab_size=cfg.vocab_size)).eval()
        with torch.no_grad():
            return model(torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M))).logits.softmax(-1)
    return run


def torch_transformer(cfg: TransformerConfig) -> Callable[[], object]:
    def run():
        embed, out = nn.Embedding(cfg.vocab_size, cfg.E), nn.Linear(cfg.E, cfg.vocab_size)
        model = nn.Transformer(cfg.E, cfg.nhead, cfg.layers, cfg.layers, cfg.d_ff, dropout=0.0, batch_first=True)
        with torch.no_grad():
            src = embed(torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M)))  # (N, M, E)
            tgt = embed(torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M_target)))  # (N, M_target, E)
            mask = nn.Transformer.generate_square_subsequent_mask(cfg.M_target)
            return out(model(src, tgt, tgt_mask=mask)).softmax(-1)
    return run


def torch_encoder(cfg: TransformerConfig) -> Callable[[], object]:
    def run():
        embed, out = nn.Embedding(cfg.vocab_size, cfg.E), nn.Linear(cfg.E, cfg.vocab_size)
        layer = nn.TransformerEncoderLayer(cfg.E, cfg.nhead, cfg.d_ff, dropout=0.0, batch_first=True)
        model = nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)
        with torch.no_grad():
            return out(model(embed(torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M))))).softmax(-1)
    return run


def hf_bert(cfg: TransformerConfig) -> Callable[[], object]:
    def run():
        model = transformers.BertForMaskedLM(transformers.BertConfig(
            hidden_size=cfg.E, num_hidden_layers=cfg.layers, num_attention_heads=cfg.nhead, intermediate_size=cfg.d_ff,
            vocab_size=cfg.vocab_size, max_position_embeddings=cfg.max_len)).eval()
        with torch.no_grad():
            return model(torch.randint(0, cfg.vocab_size, (cfg.N, cfg.M))).logits.softmax(-1)
    return run


def seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare(name: str, ours: Callable[[], object], reference: Callable[[], object], repeats: int) -> float:
    """Warm both, then time them interleaved; print the medians and the median ratio."""
    ours(), reference()
    mine, theirs, ratios = [], [], []
    for i in range(repeats):
        pair = (ours, reference) if i % 2 == 0 else (reference, ours)
        times = {fn: seconds(fn) for fn in pair}
        mine.append(times[ours])
        theirs.append(times[reference])
        ratios.append(times[ours] / times[reference])
    ratio = statistics.median(ratios)
    verdict = "ok" if ratio <= RATIO_TARGET else "OVER"
    print(f"{name:<44} ours {statistics.median(mine) * 1e3:8.1f} ms   "
          f"reference {statistics.median(theirs) * 1e3:8.1f} ms   "
          f"ratio {ratio:.2f} ({verdict}, target <= {RATIO_TARGET})")
    return ratio


def cli_seconds(cfg: TransformerConfig) -> float:
    args = ["--arch", cfg.arch, "--N", "1", "--M", str(cfg.M), "--E", str(cfg.E), "--nhead", str(cfg.nhead),
            "--nhead-kv", str(cfg.nhead_kv), "--layers", str(cfg.layers), "--d-ff", str(cfg.d_ff),
            "--vocab-size", str(cfg.vocab_size), "--positional", cfg.positional, "--norm", cfg.norm,
            "--activation", cfg.activation, "--norm-first", "--no-bias", "--json"]
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, capture_output=True, text=True)
    took = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, {torch.get_num_threads()} threads\n")

    big = LLAMA2_70B.replace(N=1, M=4096)
    compare("Llama-2-70B shape-only trace vs HF meta", lambda: trace(big, shape_only=True), hf_llama_meta(big),
            args.repeats)

    small = dict(N=2, M=16, E=64, nhead=4, layers=2, vocab_size=1000)
    families = [
        ("encoder-decoder vs nn.Transformer", TransformerConfig(**small), torch_transformer),
        ("decoder-only (GPT-2 parts) vs HF GPT-2",
         TransformerConfig(**small, arch="decoder-only", positional="learned", activation="gelu", norm_first=True,
                           tie_embeddings=True), hf_gpt2),
        ("decoder-only (Llama parts) vs HF Llama",
         TransformerConfig(**small, arch="decoder-only", positional="rope", activation="swiglu", norm="rmsnorm",
                           norm_first=True, bias=False, nhead_kv=2), hf_llama),
        ("encoder-only vs nn.TransformerEncoder", TransformerConfig(**small, arch="encoder-only"), torch_encoder),
        ("encoder-only (BERT parts) vs HF BERT",
         TransformerConfig(**small, arch="encoder-only", positional="learned", activation="gelu"), hf_bert),
    ]
    for name, cfg, reference in families:
        compare(name, lambda cfg=cfg: trace(cfg, shape_only=False), reference(cfg), args.repeats)

    runs = sorted(cli_seconds(LLAMA3_8B) for _ in range(3))
    verdict = "ok" if runs[1] < CLI_TARGET_S else "OVER"
    print(f"\npython -m core --json at Llama-3-8B sizes (fresh process), median of 3: {runs[1]:.2f} s "
          f"({verdict}, target < {CLI_TARGET_S} s)")


if __name__ == "__main__":
    main()
