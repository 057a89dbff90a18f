"""Inside a layer: what the skip connections carry, and what the position-wise FFN is (the skip
connection and FFN questions)."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from core.config import TransformerConfig
from core.model import EncoderLayer, FeedForward, Transformer
from core.weights import seeded
from .base import (MAX_DEPTH, MAX_FF, MAX_FFN_PROBE_WIDTH, MAX_LEN, MAX_WIDTH, NUDGES, PROBE_INPUTS, PROBE_WIDTH,
                   Evidence, bounded, generator, largest_divisor_at_most)

# Positions in the skip ablation, whatever M is: over one position attention has nothing to mix, and
# without the skips the token's own direction can then survive many layers.
SKIP_POSITIONS = 16

RESIDUAL_ABLATION_LABELS = {
    "depth": "your depth: layers (at most 16)",
    "depths": "depths tried, in layers",
    "grad_with_skips": "gradient norm at the embeddings, your depth, with skips",
    "grad_without_skips": "gradient norm at the embeddings, your depth, no skips",
    "grad_ratio": "gradient with skips ÷ without, at your depth",
    "cosine_with_skips": "output-input cosine similarity, your depth, with skips",
    "cosine_without_skips": "output-input cosine similarity, your depth, no skips",
    "grad_deepest_with": "gradient norm at the embeddings, deepest stack, with skips",
    "grad_deepest_without": "gradient norm at the embeddings, deepest stack, no skips",
}


def residual_ablation(cfg: TransformerConfig) -> Evidence:
    """Gradient norm at the embeddings, and output/input resemblance, with and without skip paths.

    One stack of encoder layers, seeded once; its skip paths are switched off and on, so only the
    path changes. The loss at depth d is a fixed random projection of layer d's output. It runs over
    SKIP_POSITIONS positions whatever M is.
    """
    small, note = bounded(cfg, uses=("E", "nhead", "d_ff"))  # its depths and its length are its own
    E, L = small.E, SKIP_POSITIONS
    depth_cfg = min(cfg.layers, MAX_DEPTH)
    if cfg.layers > MAX_DEPTH:
        note = (note + " " if note else "") + f"Depth capped at {MAX_DEPTH} layers."
    depths = sorted({1, 2, 4, 8, depth_cfg})
    stack = seeded(nn.ModuleList, (EncoderLayer(E, small.nhead, small.d_ff) for _ in range(max(depths))),
                   seed=small.seed)
    x = torch.randn(1, L, E, generator=generator(small.seed))  # (1, L, E)
    target = torch.randn(1, L, E, generator=generator(small.seed + 1))  # (1, L, E)
    records, by_depth = [], {}
    for residual in (True, False):
        for layer in stack:
            layer.residual = residual
        xi = x.clone().requires_grad_(True)  # (1, L, E)
        h, outputs = xi, {}
        for d, layer in enumerate(stack, start=1):
            h = layer(h)  # (1, L, E)
            if d in depths:
                outputs[d] = h
        for d in depths:
            (grad,) = torch.autograd.grad((outputs[d] * target).sum(), xi, retain_graph=True)  # (1, L, E)
            cos = nn.functional.cosine_similarity(outputs[d].detach(), x, dim=-1).mean().item()
            by_depth[(d, residual)] = (grad.norm().item(), cos)
            records.append({"layers": d, "path": "with skips" if residual else "without skips",
                            "gradient norm at embeddings": by_depth[(d, residual)][0], "output-input cosine": cos})
    g_on, c_on = by_depth[(depth_cfg, True)]
    g_off, c_off = by_depth[(depth_cfg, False)]
    values = {"depth": depth_cfg, "depths": depths,
              # No gradient at all without the skips (d_ff=1, say): the ratio is infinite, not 0.
              "grad_with_skips": g_on, "grad_without_skips": g_off,
              "grad_ratio": g_on / g_off if g_off else (math.inf if g_on else math.nan),
              "cosine_with_skips": c_on, "cosine_without_skips": c_off,
              "grad_deepest_with": by_depth[(max(depths), True)][0],
              "grad_deepest_without": by_depth[(max(depths), False)][0]}
    if g_off == 0:
        said = ("so the ratio with skips ÷ without is infinite" if g_on
                else "and none with them either, so the ratio has no value")
        note = " ".join(n for n in (note, f"Without the skips no gradient reaches the embeddings at your depth "
                                          f"(its norm is exactly 0), {said}.") if n)
    title = f"Skip connections on and off, across depth, over {L} positions"  # whatever M is
    return Evidence("residual_ablation", title, values, records,
                    {"kind": "line", "x": "layers", "y": "gradient norm at embeddings", "color": "path",
                     "log_y": "true"}, note, RESIDUAL_ABLATION_LABELS)


FFN_LAYERS_LABELS = {
    "layers": "layers (at least 2, to compare two)",
    "linear1_shape_layer0": "layer 0: linear1 weight shape, (d_ff, E)",
    "linear1_shape_layer1": "layer 1: linear1 weight shape, (d_ff, E)",
    "linear2_shape": "linear2 weight shape, (E, d_ff)",
    "same_shape": "layers 0 and 1: linear1 weights of one shape",
    "same_tensor": "layers 0 and 1 share one linear1 weight tensor",
    "max_abs_difference": "max |difference| between the two layers' linear1 weights",
    "input_width": "FFN input width, E",
    "hidden_width": "FFN hidden width, d_ff",
    "params_per_ffn": "parameters in one FFN, weights and biases",
    "positions_changed": "output positions that moved when one input was nudged",
    "changed_position": "the input position nudged (the last)",
    "nudged_position_moved": "the nudged position's own output moved",
    "hidden_negative_fraction": f"share of hidden values below 0, {PROBE_INPUTS} random inputs",
    "output_negative_fraction": f"share of FFN output values below 0, {PROBE_INPUTS} random inputs",
}


def _below_zero(ffn: FeedForward, seed: int) -> tuple[float, float]:
    """The shares below 0 of an FFN's own recorded hidden layer and output, over PROBE_INPUTS random
    inputs, since one position gives only E numbers, too few to show a share at a small E."""
    rec: dict[str, Tensor] = {}
    probe = torch.randn(1, PROBE_INPUTS, ffn.linear1.in_features, generator=generator(seed + 3))  # (1, PROBE_INPUTS, E)
    with torch.no_grad():
        ffn(probe, rec=rec)  # records "hidden" (1, PROBE_INPUTS, d_ff) and "out" (1, PROBE_INPUTS, E)
    return (rec["hidden"] < 0).float().mean().item(), (rec["out"] < 0).float().mean().item()


def ffn_layers(cfg: TransformerConfig) -> Evidence:
    """The model's layer-0 FFN against its layer-1 FFN: same shapes, separate tensors, different values.

    Both are read out of a built Transformer's encoder, so a model that shared one FFN between
    layers would show it here. Real weights at the config's E and d_ff when that is small;
    otherwise a capped copy for the values (shapes always come from the meta device at full size).
    Also checks the FFN is position-wise: changing one position's input changes only that
    position's output.
    """
    layers = max(cfg.layers, 2)
    meta = Transformer(vocab_size=cfg.vocab_size, E=cfg.E, nhead=cfg.nhead, layers=2, d_ff=cfg.d_ff, device="meta")
    shapes = [tuple(layer.ffn.linear1.weight.shape) for layer in meta.encoder]
    # Bound E as well as E * d_ff: the attention weights grow as E^2 whatever d_ff is.
    small_enough = cfg.E <= MAX_FFN_PROBE_WIDTH and cfg.E * cfg.d_ff <= MAX_WIDTH * MAX_FF * 16
    E, d_ff = (cfg.E, cfg.d_ff) if small_enough else (min(cfg.E, MAX_WIDTH), min(cfg.d_ff, MAX_FF))
    note = "" if small_enough else f"Values compared at E={E}, d_ff={d_ff} to stay small."
    if cfg.layers < 2:
        note = (note + " " if note else "") + "The config has one layer; a second was built to compare."
    nhead = largest_divisor_at_most(E, cfg.nhead)  # as bounded() picks it; the FFNs do not depend on it
    model = seeded(Transformer, vocab_size=2, E=E, nhead=nhead, layers=2, d_ff=d_ff, seed=cfg.seed)
    stack = [layer.ffn for layer in model.requires_grad_(False).encoder]  # the model's own two FFNs
    w0, w1 = stack[0].linear1.weight, stack[1].linear1.weight  # (d_ff, E) each
    L = min(cfg.M, MAX_LEN)
    x = torch.randn(1, L, E, generator=generator(cfg.seed))  # (1, L, E)
    # The first nudge switches hidden unit 0 on (a random one can leave a narrow layer's ReLUs all off); one
    # batch shape for both copies, so untouched positions match bit for bit.
    plain = x.repeat(NUDGES, 1, 1)  # (NUDGES, L, E)
    y = plain.clone()
    y[1:, L - 1] += 3 * torch.randn(NUDGES - 1, E, generator=generator(cfg.seed + 5))  # (NUDGES - 1, E)
    w, b = stack[0].linear1.weight[0], stack[0].linear1.bias[0]  # (E,), ()
    h = w @ x[0, L - 1] + b  # () hidden unit 0's input at the nudged position
    y[0, L - 1] += (h.clamp_min(0) + 1 - h) * w / w.dot(w).clamp_min(1e-12)  # (E,): w @ y + b = max(h, 0) + 1
    with torch.no_grad():
        changed = (stack[0](y) - stack[0](plain)).abs().amax(dim=(0, 2))  # (L,): the most any nudge moved each
    hidden_negative, output_negative = _below_zero(stack[0], cfg.seed)
    if output_negative == 0:  # then an activation after the second layer would change nothing seen here
        width = max(E, PROBE_WIDTH)
        hidden_negative, output_negative = _below_zero(seeded(type(stack[0]), width, d_ff, seed=cfg.seed), cfg.seed)
        note = (note + " " if note else "") + (
            f"Your FFN's outputs (E={E}, d_ff={d_ff}) stayed at 0 or above for all {PROBE_INPUTS} inputs, which "
            "would hide whether anything nonlinear follows its second layer, so the shares below 0 are from a "
            f"wider FFN of the same kind, E={width}.")
    rows, cols = min(8, d_ff), min(8, E)  # the corner drawn of each (d_ff, E) weight
    records = [{"layer": f"layer {i}", "row": r, "column": c, "weight": float(w[r, c])}
               for i, w in enumerate((w0, w1)) for r in range(rows) for c in range(cols)]
    values = {
        "layers": layers, "linear1_shape_layer0": shapes[0], "linear1_shape_layer1": shapes[1],
        "linear2_shape": tuple(meta.encoder[0].ffn.linear2.weight.shape),
        "same_shape": shapes[0] == shapes[1], "same_tensor": w0.data_ptr() == w1.data_ptr(),
        "max_abs_difference": (w0 - w1).abs().max().item(), "input_width": meta.encoder[0].ffn.linear1.in_features,
        "hidden_width": meta.encoder[0].ffn.linear1.out_features,
        "params_per_ffn": sum(p.numel() for p in meta.encoder[0].ffn.parameters()),
        "positions_changed": int((changed > 0).sum()), "changed_position": L - 1,
        "nudged_position_moved": bool(changed[L - 1] > 0),
        "hidden_negative_fraction": hidden_negative, "output_negative_fraction": output_negative,
    }
    corner = f"all {rows}x{cols}" if (rows, cols) == (d_ff, E) else f"top-left {rows}x{cols} of {d_ff}x{E}"
    return Evidence("ffn_layers", f"Layer 0's and layer 1's FFN weights ({corner})", values, records,
                    {"kind": "heatmap", "x": "column", "y": "row", "color": "weight", "facet": "layer"}, note,
                    FFN_LAYERS_LABELS)
