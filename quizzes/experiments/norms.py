"""The norms: what RMSNorm drops from LayerNorm, and how much gradient reaches the embeddings of a deep
stack with the norm after each sub-layer (post-norm, the paper's) or before it (pre-norm)."""

from __future__ import annotations

import math
import statistics

import torch
from torch import nn

from core.config import TransformerConfig
from core.model import EncoderLayer, make_norm
from core.weights import seeded
from .base import Evidence, bounded, generator, largest_divisor_at_most

PRE_POST_DEPTHS = (1, 2, 4, 8, 12, 16, 24)  # layers: the deepest is the one the question asks about
PRE_POST_POSITIONS = 16
SHIFT = 3.0  # the probe's inputs have this mean, so that centring them or not shows
MIN_HEAD_WIDTH = 8  # d_k of the gradient probe's heads, at least, when the capped E allows it


NORM_COMPARE_LABELS = {
    "E": "E — the width each norm runs over",
    "layernorm_parameters": "one LayerNorm over your E: parameters",
    "rmsnorm_parameters": "one RMSNorm over your E: parameters",
    "layernorm_parts": "LayerNorm's parameters",
    "rmsnorm_parts": "RMSNorm's parameters",
    "input_mean": "mean of the probe's inputs over E",
    "layernorm_output_mean": "LayerNorm's outputs: largest |mean| over E",
    "rmsnorm_output_mean": "RMSNorm's outputs: smallest |mean| over E",
    "rmsnorm_output_rms": "RMSNorm's outputs: root mean square over E",
}


def norm_compare(cfg: TransformerConfig) -> Evidence:
    """nn.LayerNorm and nn.RMSNorm over the same inputs, whose mean is SHIFT: LayerNorm takes the mean
    away, RMSNorm only rescales; and each one's parameters, by name, at the learner's E (meta device)."""
    small, note = bounded(cfg, uses=("E",))
    E = small.E
    x = torch.randn(PRE_POST_POSITIONS, E, generator=generator(cfg.seed)) + SHIFT  # (positions, E)
    layer_norm, rms_norm = nn.LayerNorm(E), nn.RMSNorm(E, eps=1e-5)
    with torch.no_grad():
        ln, rms = layer_norm(x), rms_norm(x)  # (positions, E) each
    full_ln, full_rms = nn.LayerNorm(cfg.E, device="meta"), nn.RMSNorm(cfg.E, device="meta")
    values = {"E": cfg.E,
              "layernorm_parameters": sum(p.numel() for p in full_ln.parameters()),
              "rmsnorm_parameters": sum(p.numel() for p in full_rms.parameters()),
              "layernorm_parts": ", ".join(f"{n} ({p.numel()})" for n, p in full_ln.named_parameters()),
              "rmsnorm_parts": ", ".join(f"{n} ({p.numel()})" for n, p in full_rms.named_parameters()),
              "input_mean": x.mean().item(), "layernorm_output_mean": ln.mean(-1).abs().max().item(),
              "rmsnorm_output_mean": rms.mean(-1).abs().min().item(),
              "rmsnorm_output_rms": rms.pow(2).mean(-1).sqrt().mean().item()}
    records = [{"position": i, "mean over E": float(v), "norm": name}
               for name, out in (("LayerNorm", ln), ("RMSNorm", rms), ("input", x)) for i, v in enumerate(out.mean(-1))]
    title = f"Mean over E of {PRE_POST_POSITIONS} inputs of mean {SHIFT:g}, and after each norm"
    return Evidence("norm_compare", title, values, records,
                    {"kind": "line", "x": "position", "y": "mean over E", "color": "norm"}, note, NORM_COMPARE_LABELS)


PRE_POST_LABELS = {
    "depth": "deepest stack, in layers",
    "draws": "seeded stacks drawn, each with its own weights and inputs",
    "grad_pre": "gradient norm at the embeddings, deepest, pre-norm (first stack)",
    "grad_post": "gradient norm at the embeddings, deepest, post-norm (first stack)",
    "ratio": "pre-norm's ÷ post-norm's, deepest: geometric mean over the stacks",
    "ratio_lowest": "pre-norm's ÷ post-norm's, deepest: lowest of the stacks",
    "ratio_highest": "pre-norm's ÷ post-norm's, deepest: highest of the stacks",
    "grad_pre_one_layer": "gradient norm at the embeddings, 1 layer, pre-norm",
    "grad_post_one_layer": "gradient norm at the embeddings, 1 layer, post-norm",
}
# One seeded stack's ratio swings with its draw, so the question reads a geometric mean over stacks
# (docs/quiz.md, "Live experiments").
PRE_POST_DRAWS = 4
ABOUT_THE_SAME = 1.15


def _stack_gradients(small: TransformerConfig, seed: int, depths: tuple[int, ...]) -> dict[tuple[str, int], float]:
    """The gradient norm at the input of one seeded stack, post-norm and pre-norm, at each of ``depths``."""
    E, L = small.E, PRE_POST_POSITIONS
    x = torch.randn(1, L, E, generator=generator(seed))  # (1, L, E)
    target = torch.randn(1, L, E, generator=generator(seed + 1))  # (1, L, E)
    grads = {}
    for norm_first in (False, True):
        stack = seeded(nn.ModuleList, (EncoderLayer(E, small.nhead, small.d_ff, nhead_kv=small.nhead_kv,
                                                    norm=small.norm, norm_first=norm_first,
                                                    activation=small.activation, bias=small.bias)
                                       for _ in range(max(depths))), seed=seed)
        final = make_norm(small.norm, E, small.bias)  # pre-norm's final norm; a gain of 1 and no shift
        xi = x.clone().requires_grad_(True)  # (1, L, E)
        h, outputs = xi, {}
        for d, layer in enumerate(stack, start=1):
            h = layer(h)  # (1, L, E)
            if d in depths:
                outputs[d] = final(h) if norm_first else h
        name = "pre-norm" if norm_first else "post-norm"
        for d in depths:
            (grad,) = torch.autograd.grad((outputs[d] * target).sum(), xi, retain_graph=True)  # (1, L, E)
            grads[name, d] = grad.norm().item()
    return grads


def _ratio(grads: dict[tuple[str, int], float]) -> float:
    """Pre-norm's gradient ÷ post-norm's at the deepest; infinite when post-norm's is 0."""
    pre, post = grads["pre-norm", max(PRE_POST_DEPTHS)], grads["post-norm", max(PRE_POST_DEPTHS)]
    return pre / post if post else math.inf


def _geometric_mean(ratios: list[float]) -> float:
    """The ratios' geometric mean (a factor of 2 up and one of 2 down make 1); their median if one is 0 or infinite."""
    if all(0 < r < math.inf for r in ratios):
        return math.exp(sum(map(math.log, ratios)) / len(ratios))
    return statistics.median(ratios)


def pre_post_gradient(cfg: TransformerConfig) -> Evidence:
    """The same seeded stack of layers run post-norm and pre-norm (with its final norm): the gradient norm
    that reaches the input of the stack, the embeddings, as depth grows. The layers have the learner's
    norm, activation and K/V heads at capped widths; the loss at depth d is a fixed random projection of
    layer d's output, as in the skip connections' experiment. At the deepest, PRE_POST_DRAWS stacks of
    seeds seed, seed + 1, ... are drawn, and their ratios averaged; the chart shows the first."""
    small, note = bounded(cfg, uses=("E", "d_ff"))
    if small.E < cfg.E and small.E // small.nhead < MIN_HEAD_WIDTH:  # a capped E over many heads: slivers
        nhead = largest_divisor_at_most(small.E, small.E // MIN_HEAD_WIDTH)
        small = small.replace(nhead=nhead, nhead_kv=largest_divisor_at_most(nhead, small.nhead_kv),
                              positional="none")
    if small.nhead != cfg.nhead:
        note = " ".join(n for n in (note, f"Run with nhead={small.nhead}, heads {small.d_k} wide.") if n)
    deepest = max(PRE_POST_DEPTHS)
    grads = _stack_gradients(small, small.seed, PRE_POST_DEPTHS)
    records = [{"layers": d, "norm": name, "gradient norm at embeddings": grads[name, d]}
               for name in ("post-norm", "pre-norm") for d in PRE_POST_DEPTHS]
    ratios = [_ratio(grads)]
    for draw in range(1, PRE_POST_DRAWS):
        ratios.append(_ratio(_stack_gradients(small, small.seed + draw, (deepest,))))
    pre, post = grads["pre-norm", deepest], grads["post-norm", deepest]
    values = {"depth": deepest, "draws": PRE_POST_DRAWS, "grad_pre": pre, "grad_post": post,
              "ratio": _geometric_mean(ratios), "ratio_lowest": min(ratios),
              "ratio_highest": max(ratios),
              "grad_pre_one_layer": grads["pre-norm", 1], "grad_post_one_layer": grads["post-norm", 1]}
    return Evidence("pre_post_gradient", f"Gradient at the embeddings against depth, over {PRE_POST_POSITIONS} "
                    "positions", values, records,
                    {"kind": "line", "x": "layers", "y": "gradient norm at embeddings", "color": "norm",
                     "log_y": "true"}, note, PRE_POST_LABELS)
