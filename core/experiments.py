"""Live evidence for the quizzes: small, seeded experiments on the model a config describes.

Each experiment answers one question a learner asks ("does a future token change earlier
outputs?", "why divide by sqrt(d_k)?") by running our own modules, and returns an ``Evidence``:
plain numbers, a few chart records and a note. Nothing here knows it is displayed, but each
experiment names its numbers in words a learner reads (its ``..._LABELS``, just above it), since
only it knows what each one measured.

Every experiment is bounded, whatever the config: lengths, widths and depths are capped (see
``bounded``) and the note says so, and parameter counts of big configs are read off the meta
device, where PyTorch builds the modules without allocating their weights. A shape the learner
is asked for is shown at their own sizes: read off a shape-only trace, or, for the GRU, measured
when a real one of their sizes is cheap and otherwise worked out from a smaller real run, which
the note says (``gru_run``). Everything is seeded and runs on the CPU, under ``torch.no_grad``
unless gradients are the point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch import Tensor, nn

from .config import LLAMA_70B_SIZES, PAPER_BASE, PAPER_BIG, SIZE_NAMES, TransformerConfig, divisors
from .model import (DecoderLayer, Embedding, EncoderLayer, FeedForward, MultiHeadAttention, PositionalEncoding,
                    Transformer, generate_square_subsequent_mask, init_weights, sinusoidal_table)
from .shapes import MetaShapeCache
from .trace import BOS_ID, Trace

# Caps that keep every experiment well under a second and a few MiB, whatever the sliders say.
MAX_LEN = 16  # positions in a probe
MAX_WIDTH = 64  # E in a probe
# A LayerNorm over E=1 number always gives its bias, and over 2 keeps only which one is larger: below
# MIN_WIDTH a nudge to a layer's input moves its output not at all, or by a sign flip, so a probe runs
# at RAISED_WIDTH instead.
MIN_WIDTH, RAISED_WIDTH = 3, 4
PROBE_INPUTS = 64  # random positions the FFN's nonlinearity is read off
PROBE_WIDTH = 8  # E of the wider FFN read when the config's never gives an output below 0
NUDGES = 8  # nudges of one position in the FFN's position-wise probe
MAX_FF = 256  # d_ff in a probe
MAX_FFN_PROBE_WIDTH = 4 * MAX_WIDTH  # widest E at which ffn_layers builds the config's own model
MAX_DEPTH = 16  # layers in the residual ablation
MAX_VOCAB = 256
MAX_MASK_DRAWN = 12  # the mask's heatmap draws at most this many positions a side
MAX_MASK_SIDE = 4096  # a real causal mask up to 16 Mi booleans; beyond that, counted by formula
MAX_HEAD_TRIES = 1024
MAX_SCORE_WIDTH = 1024  # widest q and k sampled in score_scaling
# The GRU behind the RNN questions' shape and step count runs at the learner's own (N, M, E) within
# these; past them, at the maps' caps for N and E but still over every position up to
# MAX_GRU_STEPS. Its steps, about 15 us each, dominate: about 0.1 s at M=4096 (README, Performance).
MAX_GRU_WORK = 2**24  # N * M * E**2, the multiply-adds of its matrix products over 6
MAX_GRU_ELEMENTS = 2**20  # N * M * E, its input and its output: 4 MiB each
MAX_GRU_WIDTH = 512  # E: its 6 E**2 weights, 6 MiB
MAX_GRU_STEPS = 4096  # M: the M slider's last step


@dataclass(frozen=True)
class Evidence:
    """What one experiment showed, as plain values a page can render and a quiz can check.

    ``values`` holds the numbers (and small lists) the answers read; ``records`` are rows for one
    small chart, described by ``chart`` (kind 'line' | 'bar' | 'heatmap' and the field names).
    ``labels`` names each value for a learner ("gradient norm at the embeddings, ..."): the keys stay
    short for the quiz's rules, and only the experiment knows what it measured, and on what (one key,
    "changed_position" say, means different things in two experiments).
    """

    name: str
    title: str
    values: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    chart: dict[str, str] = field(default_factory=dict)
    note: str = ""
    labels: dict[str, str] = field(default_factory=dict)


# The learner's sizes, worded as the sidebar's sliders word them (SIZE_NAMES), for the experiments
# that show one of them beside what they measured (an experiment that shows a capped size names it itself).
SIZE_LABELS = {
    **SIZE_NAMES,
    "d_k": "d_k — one head's width, E / nhead",
    "d_ff": "d_ff — FFN hidden width",
}


def _largest_divisor_at_most(E: int, nhead: int) -> int:
    return max(d for d in divisors(E) if d <= nhead)


def bounded(cfg: TransformerConfig, uses: tuple[str, ...] | None = None,
            layer_norm: bool = True) -> tuple[TransformerConfig, str]:
    """A small config like ``cfg`` for probes that need real numbers, and a note on what was capped.

    nhead is kept when it still divides the capped E, otherwise the nearest smaller divisor is used.
    An E below MIN_WIDTH is raised to RAISED_WIDTH (see raised_note), and the note says that too.
    ``uses`` names the sizes the probe reads, when not all: the note names only those (the skip
    ablation builds its own depth, so "layers=2" there was untrue). ``layer_norm=False``: the probe has
    no LayerNorm, so a narrow E is kept as it is (the reason to raise it is a LayerNorm's).
    """
    changes: dict[str, Any] = {}
    if cfg.M > MAX_LEN:
        changes["M"] = MAX_LEN
    if cfg.M_target > MAX_LEN:
        changes["M_target"] = MAX_LEN
    if cfg.E > MAX_WIDTH:
        changes["E"] = MAX_WIDTH
    if cfg.E < MIN_WIDTH and layer_norm:
        changes["E"] = RAISED_WIDTH
    E = changes.get("E", cfg.E)
    nhead = cfg.nhead if E % cfg.nhead == 0 else _largest_divisor_at_most(E, cfg.nhead)
    if nhead != cfg.nhead:
        changes["nhead"] = nhead
    if cfg.d_ff > MAX_FF:
        changes["d_ff"] = MAX_FF
    if cfg.layers > 2:
        changes["layers"] = 2
    if cfg.vocab_size > MAX_VOCAB:
        changes["vocab_size"] = MAX_VOCAB
    if cfg.N > 2:
        changes["N"] = 2
    if not changes:
        return cfg, ""
    small = cfg.replace(max_len=max(changes.get("M", cfg.M), changes.get("M_target", cfg.M_target)), **changes)
    capped = [f"{k}={v}" for k, v in changes.items()
              if not (k == "E" and v > cfg.E) and (uses is None or k in uses)]
    note = " ".join(n for n in ("Run at capped sizes to stay fast: " + ", ".join(capped) + "." if capped else "",
                                raised_note(cfg) if layer_norm else "") if n)
    return small, note


def raised_note(cfg: TransformerConfig) -> str:
    """Why a probe runs at E=RAISED_WIDTH when the config's E is below MIN_WIDTH; '' otherwise."""
    if cfg.E >= MIN_WIDTH:
        return ""
    return (f"Run at E={RAISED_WIDTH}, not E={cfg.E}: a LayerNorm over one number always gives its bias, and "
            "over two it keeps only which one is larger, so a layer's output would say almost nothing about its "
            "input.")


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _pattern(influence: list[list[float]]) -> str:
    """Name the shape of an influence map: out position i (row) moved by input position j (column)."""
    L = len(influence)
    above = any(influence[i][j] != 0 for i in range(L) for j in range(L) if j > i)
    below = any(influence[i][j] != 0 for i in range(L) for j in range(L) if j < i)
    if above and below:
        return "full"
    if below:
        return "lower"
    if above:
        return "upper"
    return "diagonal"


def _influence(fn: Callable[[Tensor], Tensor], x: Tensor, seed: int) -> list[list[float]]:
    """How far output position i (row) moves when input position j (column) is nudged.

    Perturbation, not gradients: copy 0 of the batch is the plain input, copy j+1 has position j
    nudged along a fixed random direction, and one no-grad forward pass runs all L+1 copies.
    Moves smaller than a millionth of the largest are rounding noise and count as zero.
    """
    L, E = x.shape[1], x.shape[2]
    nudge = torch.randn(E, generator=_gen(seed + 7))  # (E,)
    batch = x.repeat(L + 1, 1, 1)  # (L+1, L, E)
    batch[1:] += torch.eye(L).unsqueeze(-1) * nudge  # copy j+1 gets position j nudged
    with torch.no_grad():
        out = fn(batch)  # (L+1, L, E)
    moved = (out[1:] - out[:1]).abs().sum(-1)  # (L copies j, L outputs i)
    cutoff = 1e-6 * float(moved.max()) if moved.numel() else 0.0
    moved = torch.where(moved > cutoff, moved, torch.zeros_like(moved))
    return moved.T.tolist()  # rows: output i, columns: input j


class _UndrawnGRU(nn.GRU):
    """nn.GRU that draws nothing at construction; ``_seeded_gru`` fills it."""

    def reset_parameters(self) -> None:
        pass


def _seeded_gru(E: int, seed: int) -> nn.GRU:
    """nn.GRU(E, E) with PyTorch's default bounds, drawn from a private generator.

    Seeding the global generator instead would change the random stream of every other caller.
    (Building it on the meta device and moving it with to_empty would also avoid the draw, but
    PyTorch's meta empty_like imports sympy on first use, half a second.)
    """
    gru = _UndrawnGRU(E, E, batch_first=True)  # allocated, not drawn
    gen, bound = _gen(seed), 1.0 / math.sqrt(E)
    with torch.no_grad():
        for p in gru.parameters():
            p.uniform_(-bound, bound, generator=gen)
    return gru


def _gru_sizes(cfg: TransformerConfig) -> tuple[int, int, int]:
    """(N, M, E) for the real nn.GRU(E, E) run behind the GRU's shape and step count.

    The learner's own sizes when that run is cheap (see MAX_GRU_WORK and its neighbours), so the
    evidence shows their shape as measured. Otherwise N and E are capped as for the maps, but M
    is kept up to MAX_GRU_STEPS: the steps are then still counted at the learner's length. (The
    meta device cannot help: PyTorch's GRU on meta steps through Python meta kernels, 12-15 s at
    the sliders' largest sizes, and its first call imports sympy and torch._dynamo.)
    """
    N, M, E = cfg.N, min(cfg.M, MAX_GRU_STEPS), cfg.E
    if M == cfg.M and E <= MAX_GRU_WIDTH and N * M * E <= MAX_GRU_ELEMENTS and N * M * E * E <= MAX_GRU_WORK:
        return N, M, E
    return min(N, 2), M, min(E, MAX_WIDTH)


def gru_run(cfg: TransformerConfig, seed: int) -> tuple[dict[str, Any], str]:
    """nn.GRU(E, E, batch_first=True) on a batch of the encoder's input shape (N, M, E): the shape
    it returns and the steps it takes, for the learner's sizes, with a note when it ran smaller.

    A run at smaller sizes shows the rule (the output has its input's shape: one E-wide hidden
    state per position of each sequence, one step per position), and the values give that rule
    applied to the learner's sizes, so the evidence always shows the shape their answer needs,
    with the sizes it was measured at beside it.
    """
    yours = (cfg.N, cfg.M, cfg.E)
    N, M, E = _gru_sizes(cfg)
    gru = _seeded_gru(E, seed)
    batch = torch.randn(N, M, E, generator=_gen(seed + 2))  # (N, M, E), the encoder's input shape
    with torch.no_grad():
        every_step, _ = gru(batch)  # (N, M, E) -> (N, M, E): one E-wide hidden state per position
    ran_on, got = tuple(batch.shape), tuple(every_step.shape)
    steps = got[1]  # the GRU emits its hidden state after each step: one per position it stepped through
    values = {"gru_input_shape": yours, "gru_output_shape": got, "rnn_sequential_steps": steps,
              "gru_ran_on": f"{ran_on}: your sizes"}
    if ran_on == yours:
        return values, ""
    if got == ran_on:  # the rule the run shows: the output has its input's shape
        values["gru_output_shape"] = yours
    values["gru_ran_on"] = f"{ran_on}, returned {got}: smaller, see below"
    note = (f"nn.GRU(E, E) at your sizes, (N, M, E) = {yours}, costs too much to run here, so a real "
            f"nn.GRU({E}, {E}) ran on {ran_on} and returned {got}: its input's shape, one E-wide hidden "
            f"state per position of each sequence. At your sizes that is {values['gru_output_shape']}, "
            "the table's GRU output shape.")
    if M < cfg.M:
        values["rnn_sequential_steps"] = cfg.M  # one step per position, as the run shows for its M
        note += f" It took {steps} steps for {M} positions, one per position: at M={cfg.M}, {cfg.M} steps."
    else:
        note += f" It stepped through all M={M} positions, one step each."
    return values, note


def _maps_note(cfg: TransformerConfig, small: TransformerConfig) -> str:
    """Which of the influence maps' sizes were capped (N does not enter them; L+1 copies are run), or
    raised (an E too narrow for a LayerNorm to pass anything on)."""
    capped = [f"{k}={getattr(small, k)}" for k in ("M", "M_target", "E", "nhead", "d_ff")
              if getattr(small, k) < getattr(cfg, k)]
    note = f"The influence maps run at capped sizes to stay small: {', '.join(capped)}." if capped else ""
    return " ".join(n for n in (note, raised_note(cfg)) if n)


# Each influence map's title over its panel: a bare "rnn" there did not say which recurrent network
# ran, nor "decoder" that its self-attention is masked.
MAP_TITLES = {"rnn": "GRU (an RNN)", "encoder": "encoder layer", "decoder": "masked decoder layer"}
DEPENDENCY_MAPS_LABELS = {
    "rnn_pattern": "GRU: pattern of its influence map",
    "encoder_pattern": "encoder layer: pattern of its influence map",
    "decoder_pattern": "masked decoder layer: pattern of its influence map",
    "gru_input_shape": "GRU input shape at your sizes, (N, M, E)",
    "gru_output_shape": "GRU output shape at your sizes, every step",
    "rnn_sequential_steps": "GRU steps, one after another, to read M positions",
    "gru_ran_on": "sizes the GRU actually ran at",
    "map_positions": "positions in the GRU's and the encoder's maps (M, at most 16)",
    "decoder_map_positions": "positions in the decoder's map (M_target, at most 16)",
    "attention_sequential_steps": "sequential steps attention takes over all positions",
    "rnn_zero_above_diagonal": "GRU map: later inputs never move earlier outputs",
    "decoder_zero_above_diagonal": "masked decoder map: later inputs never move earlier outputs",
    "encoder_nonzero_fraction": "encoder map: share of squares coloured (output moved)",
}


def _one_token_note(cfg: TransformerConfig) -> str:
    """Which of the influence maps run at two positions for a one-token sequence; '' when none do."""
    raised = [f"{k}=2" for k in ("M", "M_target") if getattr(cfg, k) == 1]
    if not raised:
        return ""
    return (f"A one-position map would fit every choice (its one output is every output), so the maps run at "
            f"{' and '.join(raised)}.")


def dependency_maps(cfg: TransformerConfig) -> Evidence:
    """Which input positions move which outputs: a GRU, our encoder layer, our masked decoder layer.

    The GRU reads positions one after another, so output i depends only on inputs 0..i (lower
    triangle). The encoder's self-attention lets every position see every other (full). The
    decoder's masked self-attention is causal again, but computed in one parallel pass. The
    GRU's output shape and step count come from a second run, at the learner's sizes when it can
    (``gru_run``).
    """
    small, _ = bounded(cfg)
    # The source's positions; the decoder reads its own M_target. A map over one position has one output,
    # which every choice of the map questions describes at once ('j and later', 'j and earlier', 'every
    # position'), so a one-token sequence is measured at two positions, and the note says so.
    L, T, E = max(small.M, 2), max(small.M_target, 2), small.E
    gru = _seeded_gru(E, small.seed)
    enc = init_weights(EncoderLayer(E, small.nhead, small.d_ff), small.seed)
    dec = init_weights(DecoderLayer(E, small.nhead, small.d_ff), small.seed)
    x = torch.randn(1, L, E, generator=_gen(small.seed)) + sinusoidal_table(L, E)  # (1, M, E)
    target = torch.randn(1, T, E, generator=_gen(small.seed)) + sinusoidal_table(T, E)  # (1, M_target, E), x if T = M
    memory = torch.randn(1, L, E, generator=_gen(small.seed + 1))  # (1, M, E)
    mask = generate_square_subsequent_mask(T)  # (M_target, M_target)
    maps = {
        "rnn": _influence(lambda t: gru(t)[0], x, small.seed),
        "encoder": _influence(lambda t: enc(t), x, small.seed),
        "decoder": _influence(lambda t: dec(t, memory.expand(t.shape[0], -1, -1), tgt_mask=mask), target,
                              small.seed),
    }
    records = [{"model": MAP_TITLES[name], "output position": i, "input position": j, "influence": v}
               for name, m in maps.items() for i, row in enumerate(m) for j, v in enumerate(row)]
    values = {f"{name}_pattern": _pattern(m) for name, m in maps.items()}
    shapes, gru_note = gru_run(cfg, small.seed)
    values.update(shapes)
    values.update({
        "map_positions": L, "decoder_map_positions": T,
        "attention_sequential_steps": 1,  # one matrix product covers every position
        "rnn_zero_above_diagonal": all(maps["rnn"][i][j] == 0 for i in range(L) for j in range(i + 1, L)),
        "decoder_zero_above_diagonal": all(maps["decoder"][i][j] == 0 for i in range(T) for j in range(i + 1, T)),
        "encoder_nonzero_fraction": sum(v != 0 for row in maps["encoder"] for v in row) / (L * L),
    })
    return Evidence("dependency_maps", "Which input positions move which outputs", values, records,
                    {"kind": "heatmap", "x": "input position", "y": "output position", "color": "influence",
                     "facet": "model"}, " ".join(n for n in (_maps_note(cfg, small), _one_token_note(cfg), gru_note)
                                                   if n),
                    DEPENDENCY_MAPS_LABELS)


PERMUTATION_LABELS = {
    "positions": "positions in the reversed sequence (M, at most 16)",
    "max_change_without_positions": "max |difference| from the reversed outputs, no positional encoding",
    "max_change_with_positions": "max |difference| from the reversed outputs, sinusoids added",
    "order_blind_without_positions": "without positions, the outputs just reverse too",
}


def permutation(cfg: TransformerConfig) -> Evidence:
    """Shuffle the positions fed to an encoder layer: without positional encoding, outputs shuffle alike.

    Self-attention and the FFN treat the sequence as a set, so order must come from the positions
    added to the embeddings.
    """
    small, note = bounded(cfg, uses=("M", "E", "nhead", "d_ff"))  # one encoder layer, one sequence
    L, E = small.M, small.E
    enc = init_weights(EncoderLayer(E, small.nhead, small.d_ff), small.seed).train(False)
    x = torch.randn(1, L, E, generator=_gen(small.seed))  # (1, L, E)
    perm = torch.arange(L).flip(0)  # reverse the sequence: a permutation that moves every pair
    pos = sinusoidal_table(L, E)  # (L, E)
    with torch.no_grad():
        plain = (enc(x[:, perm]) - enc(x)[:, perm]).abs().max().item()
        with_pos = (enc(x[:, perm] + pos) - enc(x + pos)[:, perm]).abs().max().item()
    values = {"positions": L, "max_change_without_positions": plain, "max_change_with_positions": with_pos,
              "order_blind_without_positions": plain < 1e-4}
    records = [{"input": "no positional encoding", "max |difference|": plain},
               {"input": "sinusoidal encoding added", "max |difference|": with_pos}]
    return Evidence("permutation", "Reverse the input order: do the outputs just reverse too?", values, records,
                    # Down the side: under the bars the two names were cut to 'no positional enc…'.
                    {"kind": "bar", "x": "input", "y": "max |difference|", "horizontal": "true"}, note,
                    PERMUTATION_LABELS)


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
    path changes. The loss at depth d is a fixed random projection of layer d's output.
    """
    small, note = bounded(cfg, uses=("M", "E", "nhead", "d_ff"))  # its depths are its own
    E, L = small.E, small.M
    depth_cfg = min(cfg.layers, MAX_DEPTH)
    if cfg.layers > MAX_DEPTH:
        note = (note + " " if note else "") + f"Depth capped at {MAX_DEPTH} layers."
    depths = sorted({1, 2, 4, 8, depth_cfg})
    stack = init_weights(nn.ModuleList(EncoderLayer(E, small.nhead, small.d_ff) for _ in range(max(depths))),
                         small.seed)
    x = torch.randn(1, L, E, generator=_gen(small.seed))  # (1, L, E)
    target = torch.randn(1, L, E, generator=_gen(small.seed + 1))  # (1, L, E)
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
    return Evidence("residual_ablation", "Skip connections on and off, across depth", values, records,
                    {"kind": "line", "x": "layers", "y": "gradient norm at embeddings", "color": "path",
                     "log_y": "true"}, note, RESIDUAL_ABLATION_LABELS)


SCALE_WIDTHS = ("d_k", "E", "M")  # what attention could divide q.k by: a head's width, the model's, the length


def model_scale_width(cfg: TransformerConfig) -> tuple[str, str]:
    """Which width the model's own attention divides q.k by, and the sizes it was asked at.

    One MultiHeadAttention at the bounded config's E and nhead, with at least two heads (with one,
    d_k equals E and the answers coincide), and a length that equals neither. Its recorded scores
    are compared with q.k / sqrt(w) for each width w, on its own recorded q and k.
    """
    small, _ = bounded(cfg)
    E, nhead = (small.E, small.nhead) if small.nhead > 1 else (16, 4)
    L = next(n for n in (3, 5, 7) if n not in (E // nhead, E))
    mha = init_weights(MultiHeadAttention(E, nhead), cfg.seed)
    x = torch.randn(1, L, E, generator=_gen(cfg.seed))  # (1, L, E)
    rec: dict[str, Tensor] = {}
    with torch.no_grad():
        mha(x, x, rec=rec)
    dots = rec["q"] @ rec["k"].transpose(-2, -1)  # (1, nhead, L, d_k) @ (1, nhead, d_k, L) -> (1, nhead, L, L)
    for name, width in zip(SCALE_WIDTHS, (E // nhead, E, L)):
        if torch.allclose(rec["scores"], dots / math.sqrt(width), rtol=1e-4, atol=1e-5):
            return name, f"E={E}, nhead={nhead}, M={L}"
    return "none of them", f"E={E}, nhead={nhead}, M={L}"


SCORE_SCALING_LABELS = {
    "d_k": SIZE_LABELS["d_k"],
    "keys": "keys per softmax: the most yours have, max(M, M_target), at most 64",
    "variance_unscaled": "variance of q·k at the width measured",
    "measured_at_d_k": "width measured: your d_k (at most 1024)",
    "variance_unscaled_at_d_k": "variance of q·k at your d_k",
    "variance_scaled": "variance of q·k / sqrt(d_k) at the width measured",
    "entropy_unscaled": "softmax entropy of q·k, mean over queries",
    "entropy_scaled": "softmax entropy of q·k / sqrt(d_k), mean over queries",
    "max_entropy": "highest entropy possible, log(keys): every weight equal",
    "widths": "widths d_k drawn in the chart",
    "model_divides_by": "our attention divides q·k by the square root of",
    "model_asked_at": "sizes our attention was checked at",
}


def score_scaling(cfg: TransformerConfig) -> Evidence:
    """Variance of q.k grows with d_k; dividing by sqrt(d_k) keeps it near 1 and the softmax soft.

    q and k have unit-variance entries, as after a LayerNorm and a well-scaled projection. The
    entropy is the mean over queries of the softmax over S keys; its maximum is log(S). Also asks
    the model's own attention which width it divides by (``model_scale_width``).
    """
    d_k = cfg.d_k
    # The most keys any of the model's softmaxes has: M in the encoder and the cross-attention, M_target in
    # the decoder's last query. With one key (M = M_target = 1) every weight is 1 and every entropy 0.
    S = min(max(cfg.M, cfg.M_target), MAX_LEN * 4)
    gen = _gen(cfg.seed)
    widths = sorted({1, 4, 16, 64, 256, min(d_k, MAX_SCORE_WIDTH)})
    records, at = [], {}
    with torch.no_grad():
        for w in widths:
            samples = min(4096, 2**22 // w)  # at most 4 Mi numbers per tensor
            q = torch.randn(samples, w, generator=gen)  # (samples, w)
            k = torch.randn(samples, w, generator=gen)  # (samples, w)
            dots = (q * k).sum(-1)  # (samples,)
            qs = torch.randn(64, w, generator=gen)  # (64 queries, w)
            ks = torch.randn(S, w, generator=gen)  # (S keys, w)
            raw = qs @ ks.T  # (64, S)
            ent = {}
            for label, scores in (("unscaled", raw), ("scaled", raw / math.sqrt(w))):
                p = torch.softmax(scores, dim=-1)  # (64, S)
                # + 0.0: one key gives -(1 * log 1) = -0.0, which the evidence would print as "-0"
                ent[label] = -(p * p.clamp_min(1e-30).log()).sum(-1).mean().item() + 0.0
            var_raw, var_scaled = dots.var().item(), (dots / math.sqrt(w)).var().item()
            at[w] = (var_raw, var_scaled, ent["unscaled"], ent["scaled"])
            records += [{"d_k": w, "scores": "q·k", "variance": var_raw, "softmax entropy": ent["unscaled"]},
                        {"d_k": w, "scores": "q·k / sqrt(d_k)", "variance": var_scaled,
                         "softmax entropy": ent["scaled"]}]
    var_raw, var_scaled, ent_raw, ent_scaled = at[min(d_k, MAX_SCORE_WIDTH)]
    note = ("" if d_k <= MAX_SCORE_WIDTH
            else f"Measured at d_k={MAX_SCORE_WIDTH} (capped); the variance keeps growing like d_k.")
    if S == 1:
        note = " ".join(n for n in (note, "Every softmax in your model has one key (M = M_target = 1): its one "
                                          "weight is 1, so its entropy is 0, scaled or not.") if n)
    measured = min(d_k, MAX_SCORE_WIDTH)
    values = {"d_k": d_k, "keys": S, "variance_unscaled": var_raw, "measured_at_d_k": measured,
              # Past the cap, the variance per dimension measured at the cap, times d_k.
              "variance_unscaled_at_d_k": var_raw * d_k / measured, "variance_scaled": var_scaled,
              "entropy_unscaled": ent_raw, "entropy_scaled": ent_scaled, "max_entropy": math.log(S),
              "widths": widths}
    values["model_divides_by"], values["model_asked_at"] = model_scale_width(cfg)
    # The chart draws the variance only; the entropies are in its tooltips and the table of values.
    return Evidence("score_scaling", "Variance of q·k against d_k, unscaled and divided by sqrt(d_k)", values, records,
                    {"kind": "line", "x": "d_k", "y": "variance", "color": "scores", "log_y": "true"}, note,
                    SCORE_SCALING_LABELS)


HEAD_OPTIONS_LABELS = {
    "E": SIZE_LABELS["E"],
    "allowed": "nhead values that build an attention block",
    "count": "how many nhead values E allows",
    "smallest_refused": "smallest nhead that E refuses",
    "param_counts": "attention parameter counts seen, over every allowed nhead",
    "same_for_all": "attention has one parameter count for every allowed nhead",
    "d_k": SIZE_LABELS["d_k"],
}


def head_options(cfg: TransformerConfig) -> Evidence:
    """Try to build MultiHeadAttention(E, nhead) for every nhead, on the meta device.

    The ones that build are the divisors of E; their parameter count is the same for all of them.
    """
    E = cfg.E
    ok, counts = [], {}
    for h in range(1, min(E, MAX_HEAD_TRIES) + 1):
        try:
            mha = MultiHeadAttention(E, h, device="meta")
        except ValueError:
            continue
        ok.append(h)
        counts[h] = sum(p.numel() for p in mha.parameters())
    bad = next(h for h in range(2, E + 3) if E % h)
    records = [{"nhead": h, "d_k": E // h, "attention parameters": counts[h]} for h in ok]
    values = {"E": E, "allowed": ok, "count": len(ok), "smallest_refused": bad,
              "param_counts": sorted(set(counts.values())), "same_for_all": len(set(counts.values())) == 1,
              "d_k": cfg.d_k}
    note = f"Only nhead up to {MAX_HEAD_TRIES} tried." if E > MAX_HEAD_TRIES else ""
    if len(ok) == 1:
        note = (f"E={E} allows only nhead={ok[0]}, so there is no other nhead to compare here; at any E the count is "
                "4(E² + E) whatever nhead is.")
    return Evidence("head_options", "Which nhead values E allows, and attention's size for each", values, records,
                    {"kind": "bar", "x": "nhead", "y": "attention parameters"}, note, HEAD_OPTIONS_LABELS)


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
    inputs (M=1 gave E numbers only, and at E=2 both were above 0)."""
    rec: dict[str, Tensor] = {}
    probe = torch.randn(1, PROBE_INPUTS, ffn.linear1.in_features, generator=_gen(seed + 3))  # (1, PROBE_INPUTS, E)
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
    # The model built holds about 24 E^2 attention weights besides its FFNs' 8 E d_ff, so E is bounded
    # as well as E * d_ff: at E=12288 with d_ff=1, a bound on the product alone built 3.6 billion
    # weights (26 s and 14 GB for one quiz answer, on the sliders).
    small_enough = cfg.E <= MAX_FFN_PROBE_WIDTH and cfg.E * cfg.d_ff <= MAX_WIDTH * MAX_FF * 16
    E, d_ff = (cfg.E, cfg.d_ff) if small_enough else (min(cfg.E, MAX_WIDTH), min(cfg.d_ff, MAX_FF))
    note = "" if small_enough else f"Values compared at E={E}, d_ff={d_ff} to stay small."
    if cfg.layers < 2:
        note = (note + " " if note else "") + "The config has one layer; a second was built to compare."
    nhead = _largest_divisor_at_most(E, cfg.nhead)  # as bounded() picks it; the FFNs do not depend on it
    model = init_weights(Transformer(vocab_size=2, E=E, nhead=nhead, layers=2, d_ff=d_ff), cfg.seed)
    stack = [layer.ffn for layer in model.requires_grad_(False).encoder]  # the model's own two FFNs
    w0, w1 = stack[0].linear1.weight, stack[1].linear1.weight  # (d_ff, E) each
    L = min(cfg.M, MAX_LEN)
    x = torch.randn(1, L, E, generator=_gen(cfg.seed))  # (1, L, E)
    # Several nudges of the last position, each its own copy: a random nudge can leave every ReLU of a
    # narrow hidden layer (d_ff=1, say) off, and then no output moves at all. So the first nudge is
    # aimed: along hidden unit 0's weights, it sets that unit's input to 1 more than the ReLU gave
    # before, which switches it on, or moves it when on; the others are random.
    # The plain copies go through the FFN as one batch of the same shape, so that an untouched position
    # gives bit-for-bit the same output (a batch of another shape may round differently).
    plain = x.repeat(NUDGES, 1, 1)  # (NUDGES, L, E)
    y = plain.clone()
    y[1:, L - 1] += 3 * torch.randn(NUDGES - 1, E, generator=_gen(cfg.seed + 5))  # (NUDGES - 1, E)
    w, b = stack[0].linear1.weight[0], stack[0].linear1.bias[0]  # (E,), ()
    h = w @ x[0, L - 1] + b  # () hidden unit 0's input at the nudged position
    y[0, L - 1] += (h.clamp_min(0) + 1 - h) * w / w.dot(w).clamp_min(1e-12)  # (E,): w @ y + b = max(h, 0) + 1
    with torch.no_grad():
        changed = (stack[0](y) - stack[0](plain)).abs().amax(dim=(0, 2))  # (L,): the most any nudge moved each
    hidden_negative, output_negative = _below_zero(stack[0], cfg.seed)
    if output_negative == 0:  # then an activation after the second layer would change nothing seen here
        width = max(E, PROBE_WIDTH)
        hidden_negative, output_negative = _below_zero(init_weights(type(stack[0])(width, d_ff), cfg.seed), cfg.seed)
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


LEARNED_POSITIONS_LABELS = {
    "max_len": "max_len — rows of a learned table",
    "learned_shape_at_max_len": "learned table's output shape for max_len positions",
    "learned_error": "learned table's answer for max_len + 1 positions",
    "learned_fails_past_max_len": "learned table refuses max_len + 1 positions",
    "learned_params": "learned table's parameters, max_len × E",
    "sinusoidal_shape_past_max_len": "sinusoids' shape for max_len + 1 positions",
    "sinusoidal_params": "sinusoids' parameters",
}


def learned_positions(cfg: TransformerConfig) -> Evidence:
    """Ask a learned table and the sinusoids for one position past max_len.

    The learned table lives on the meta device (asking past its end fails before any value is
    read), so even a huge max_len costs nothing.
    """
    E, max_len = cfg.E, cfg.max_len
    learned = PositionalEncoding(E, "learned", max_len, device="meta")
    ok_shape = tuple(learned(max_len, device="meta").shape)
    try:
        learned(max_len + 1, device="meta")
        error = ""
    except ValueError as exc:
        error = str(exc)
    with MetaShapeCache():  # shapes by rule, without PyTorch's slow first meta call
        past_shape = tuple(sinusoidal_table(max_len + 1, E, device="meta").shape)  # (max_len + 1, E)
    L = min(max_len + 1, 4 * MAX_LEN)
    start = max_len + 1 - L  # chart the last L positions, up to and including position max_len
    width = min(E, 8)
    position = torch.arange(start, max_len + 1, dtype=torch.float64).unsqueeze(1)  # (L, 1)
    rate = torch.exp(torch.arange(0, E, 2, dtype=torch.float64)[: (width + 1) // 2] * (-math.log(10000.0) / E))
    angles = position * rate  # (L, ceil(width/2))
    table = torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1)[:, :width]  # (L, width): sin, cos, ...
    records = [{"position": start + p, "dimension": d, "value": float(table[p, d])}
               for p in range(L) for d in range(width)]
    values = {"max_len": max_len, "learned_shape_at_max_len": ok_shape, "learned_error": error,
              "learned_fails_past_max_len": bool(error), "learned_params": max_len * E,
              "sinusoidal_shape_past_max_len": past_shape, "sinusoidal_params": 0}
    note = f"Charted: sinusoid dimensions 0-{width - 1} at positions {start}-{max_len}."
    return Evidence("learned_positions", "Positions past max_len: learned table against sinusoids", values,
                    records, {"kind": "line", "x": "position", "y": "value", "color": "dimension"}, note,
                    LEARNED_POSITIONS_LABELS)


CAUSAL_PROBE_LABELS = {
    "M_target": "target length probed, M_target (at most 16)",
    "changed_position": "target position whose token was changed",
    "earlier_max_change_masked": "max change of an earlier output, with the mask",
    "later_max_change_masked": "max change at the changed position or later, with the mask",
    "earlier_max_change_unmasked": "max change of an earlier output, without the mask",
    "earlier_unchanged_with_mask": "earlier outputs unchanged with the mask",
    "positions_changed_with_mask": "output positions that moved, with the mask",
}


def causal_probe(cfg: TransformerConfig) -> Evidence:
    """Change one future target token and measure every decoder output position, mask on and off."""
    small, note = bounded(cfg, uses=("M", "M_target", "E", "nhead", "d_ff", "layers", "vocab_size"))  # one sequence
    if small.M_target == 1:  # one target token, the start token: nothing earlier to protect, every choice true
        small = small.replace(M_target=2)
        note = " ".join(n for n in (note, "With M_target=1 the decoder's only input is the start token and there is "
                                          "no earlier position for the mask to protect, so the probe runs at "
                                          "M_target=2 and changes the token after the start token.") if n)
    model = Transformer.from_config(small).train(False)
    T = small.M_target
    gen = _gen(small.seed)
    low = min(2, small.vocab_size - 1)
    src = torch.randint(low, small.vocab_size, (1, small.M), generator=gen)  # (1, M)
    tgt = torch.randint(low, small.vocab_size, (1, T), generator=gen)  # (1, M_target)
    tgt[0, 0] = BOS_ID
    pos = T // 2  # T >= 2 (see above): a token after the start token, which stays as it is
    changed = tgt.clone()
    choices = small.vocab_size - low  # ids the batch draws from: low .. vocab_size-1
    old = int(tgt[0, pos])
    # Any other id: the next drawable one, or, with a single drawable id (vocab_size 2 or 3), the one after
    # it, wrapping to 0 ('1 - old' gave id -1 at vocab_size 3, and the probe failed).
    changed[0, pos] = low + (old - low + 1) % choices if choices > 1 else (old + 1) % small.vocab_size
    mask = generate_square_subsequent_mask(T)  # (M_target, M_target)
    with torch.no_grad():
        memory = model.encode(src)  # (1, M, E)
        diffs = {}
        for label, m in (("causal mask", mask), ("no mask", None)):
            a = model.decode(tgt, memory, tgt_mask=m)  # (1, M_target, E)
            b = model.decode(changed, memory, tgt_mask=m)  # (1, M_target, E)
            diffs[label] = (a - b).abs().amax(dim=-1)[0].tolist()  # (M_target,)
    records = [{"output position": i, "mask": label, "max |change|": v}
               for label, d in diffs.items() for i, v in enumerate(d)]
    masked, unmasked = diffs["causal mask"], diffs["no mask"]
    values = {"M_target": T, "changed_position": pos,
              "earlier_max_change_masked": max(masked[:pos], default=0.0),
              "later_max_change_masked": max(masked[pos:], default=0.0),
              "earlier_max_change_unmasked": max(unmasked[:pos], default=0.0),
              "earlier_unchanged_with_mask": all(v == 0 for v in masked[:pos]),
              "positions_changed_with_mask": [i for i, v in enumerate(masked) if v > 0]}
    return Evidence("causal_probe", "Change a future target token: which decoder outputs move?", values, records,
                    {"kind": "bar", "x": "output position", "y": "max |change|", "color": "mask"}, note,
                    CAUSAL_PROBE_LABELS)


def _drawn(shown: int, total: int, what: str) -> str:
    """A title's word for how much of a sequence is drawn: "all 8 positions", or "first 12 of 4096
    positions" when a cap cuts it, so that a title never promises more, or less, than the chart."""
    if shown == total:
        return f"all {total} {what}" if total > 1 else f"the one {what.removesuffix('s')}"
    return f"first {shown} of {total} {what}"


MASK_COUNTS_LABELS = {
    "M_target": SIZE_LABELS["M_target"],
    "shape": "causal mask's shape",
    "blocked": "mask entries blocked (True)",
    "visible": "mask entries left visible (False)",
    "diagonal_blocked": "some position is blocked from itself",
    "below_diagonal_blocked": "some position is blocked from an earlier one",
    "key_padding_shape": "key padding mask's shape, (N, M)",
}


def mask_counts(cfg: TransformerConfig) -> Evidence:
    """The causal mask for M_target, and the key padding mask's shape, read off the real tensors."""
    T = cfg.M_target
    if T <= MAX_MASK_SIDE:
        mask = generate_square_subsequent_mask(T)  # (M_target, M_target)
        blocked, diagonal_blocked, shape = int(mask.sum()), bool(mask.diagonal().any()), tuple(mask.shape)
        below_blocked = bool(mask.tril(-1).any())
        note = ""
    else:
        with MetaShapeCache():  # shapes by rule, without PyTorch's slow first meta call
            mask = generate_square_subsequent_mask(T, device="meta")  # (M_target, M_target)
        shape, blocked, diagonal_blocked, below_blocked = tuple(mask.shape), T * (T - 1) // 2, False, False
        note = f"M_target={T} is too long to build the mask for real; counted by formula."
    side = min(T, MAX_MASK_DRAWN)
    small = generate_square_subsequent_mask(side)
    records = [{"query position": i, "key position": j, "blocked": bool(small[i, j])}
               for i in range(side) for j in range(side)]
    values = {"M_target": T, "shape": shape, "blocked": blocked, "visible": T * T - blocked,
              "diagonal_blocked": diagonal_blocked, "below_diagonal_blocked": below_blocked,
              "key_padding_shape": (cfg.N, cfg.M)}
    title = f"The causal mask (True = blocked), {_drawn(side, T, 'positions')}"
    return Evidence("mask_counts", title, values, records,
                    {"kind": "heatmap", "x": "key position", "y": "query position", "color": "blocked"}, note,
                    MASK_COUNTS_LABELS)


SHIFT_RIGHT_LABELS = {
    "M_target": SIZE_LABELS["M_target"],
    "start_id": "start token's id, the first decoder input",
    "targets_per_sequence": "labels (next tokens to predict) per sequence",
    "decoder_input": "decoder input: start token, then the target minus its last",
    "labels": "labels: the target itself",
    "input_is_labels_shifted": "decoder input is the labels shifted right by one",
}


def shift_right(cfg: TransformerConfig) -> Evidence:
    """Decoder input = start token + target[:-1]; the labels are the target itself."""
    T = min(cfg.M_target, 4 * MAX_LEN)
    gen = _gen(cfg.seed)
    low = min(2, cfg.vocab_size - 1)
    target = torch.randint(low, cfg.vocab_size, (T,), generator=gen)  # (M_target,)
    decoder_input = torch.cat([torch.tensor([BOS_ID]), target[:-1]])  # (M_target,)
    records = [{"position": i, "decoder input": int(decoder_input[i]), "label": int(target[i])} for i in range(T)]
    values = {"M_target": cfg.M_target, "start_id": BOS_ID, "targets_per_sequence": cfg.M_target,
              "decoder_input": decoder_input.tolist(), "labels": target.tolist(),
              "input_is_labels_shifted": decoder_input[1:].tolist() == target[:-1].tolist()}
    note = "" if T == cfg.M_target else f"First {T} positions shown."
    if low == BOS_ID:  # vocab_size 2: no id is left for the content tokens but the start token's
        note = " ".join(n for n in (note, f"With vocab_size={cfg.vocab_size} the only id besides padding (0) is "
                                          f"{BOS_ID}, so every target token is id {BOS_ID} too, the start token's "
                                          "id.") if n)
    return Evidence("shift_right", "Decoder input and labels, position by position", values, records,
                    {"kind": "table"}, note, SHIFT_RIGHT_LABELS)


def _count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


PARAMETER_COUNTS_LABELS = {
    "qkv_weights": "W^Q, W^K, W^V at your E, weights only",
    "qkv_with_bias": "W^Q, W^K, W^V at your E, with their biases",
    "attention_block": "one attention block at your E: Q, K, V, O and biases",
    "embedding": "one token embedding, vocab_size × E",
    "llama_qkv_weights": f"W^Q, W^K, W^V at Llama-2-70B's E={LLAMA_70B_SIZES.E}, weights only",
    "llama_embedding": f"token embedding at Llama-2-70B's {LLAMA_70B_SIZES.vocab_size} × {LLAMA_70B_SIZES.E}",
    "paper_base_total": f"our whole model at the paper's base sizes (E={PAPER_BASE.E})",
    "paper_big_total": f"our whole model at the paper's big sizes (E={PAPER_BIG.E})",
    "model_total": "our whole model at your config",
    "number_of_layer_norms": "LayerNorms in the whole model (a count of modules)",
    "number_of_ffn_blocks": "FFN blocks in the whole model (a count of modules)",
    "number_of_attention_blocks": "attention blocks in the whole model (a count of modules)",
}


def parameter_counts(cfg: TransformerConfig) -> Evidence:
    """Parameters counted on modules built on the meta device: no weights are allocated.

    Covers the config's attention block and embedding, the fourth seed note's Llama-2-70B widths
    (E=8192, 32000 tokens) and our model at the paper's base and big sizes.
    """
    mha = MultiHeadAttention(cfg.E, cfg.nhead, device="meta")
    qkv_weights = mha.in_proj.weight.numel()  # W^Q, W^K and W^V, stacked as one (3E, E) matrix
    qkv_all = _count(mha.in_proj)
    embedding = Embedding(cfg.vocab_size, cfg.E, device="meta")  # ours draws nothing, even on meta
    llama = MultiHeadAttention(LLAMA_70B_SIZES.E, LLAMA_70B_SIZES.nhead, device="meta")
    llama_qkv = llama.in_proj.weight.numel()
    llama_embed = Embedding(LLAMA_70B_SIZES.vocab_size, LLAMA_70B_SIZES.E, device="meta").weight.numel()
    model = Transformer.from_config(cfg, device="meta")
    base = _count(Transformer.from_config(PAPER_BASE, device="meta"))
    big = _count(Transformer.from_config(PAPER_BIG, device="meta"))
    values = {
        "qkv_weights": qkv_weights, "qkv_with_bias": qkv_all, "attention_block": _count(mha),
        "embedding": embedding.weight.numel(), "llama_qkv_weights": llama_qkv, "llama_embedding": llama_embed,
        "paper_base_total": base, "paper_big_total": big, "model_total": _count(model),
        # Counts of modules, not of parameters: named so, since they sit among parameter counts.
        "number_of_layer_norms": sum(isinstance(m, nn.LayerNorm) for m in model.modules()),
        "number_of_ffn_blocks": sum(isinstance(m, FeedForward) for m in model.modules()),
        "number_of_attention_blocks": sum(isinstance(m, MultiHeadAttention) for m in model.modules()),
    }
    records = [{"what": "W^Q, W^K, W^V (this E)", "parameters": qkv_weights},
               {"what": "token embedding (this config)", "parameters": values["embedding"]},
               {"what": "whole model (this config)", "parameters": values["model_total"]},
               {"what": "Llama-2-70B widths: W^Q, W^K, W^V", "parameters": llama_qkv},
               {"what": "Llama-2-70B widths: embedding", "parameters": llama_embed},
               {"what": "paper base (ours)", "parameters": base},
               {"what": "paper big (ours)", "parameters": big}]
    return Evidence("parameter_counts", "Parameter counts from modules built on the meta device", values, records,
                    {"kind": "bar", "x": "what", "y": "parameters", "log_y": "true", "horizontal": "true"},
                    "Counted on the meta device: shapes only, nothing allocated.", PARAMETER_COUNTS_LABELS)


SOFTMAX_AXIS_LABELS = {
    "row_sums_all_one": "each row (a query, over the keys) sums to 1",
    "column_sums_all_one": "each column (a key, over the queries) sums to 1",
    "zero_above_diagonal": "every weight above the diagonal is 0 (masked)",
    "first_row": "first row: query 0's weights over the keys",
}


def softmax_axis(cfg: TransformerConfig) -> Evidence:
    """Which axis of the attention weights sums to 1: the keys (last axis), one row per query.

    The probe is the decoder's masked self-attention, so it runs over the target's M_target positions.
    """
    small, note = bounded(cfg, uses=("M_target", "E", "nhead"), layer_norm=False)  # attention alone
    mha = init_weights(MultiHeadAttention(small.E, small.nhead), small.seed)
    L = small.M_target
    x = torch.randn(1, L, small.E, generator=_gen(small.seed))  # (1, M_target, E)
    rec: dict[str, Tensor] = {}
    with torch.no_grad():
        mha(x, x, generate_square_subsequent_mask(L), rec=rec)
    w = rec["weights"][0, 0]  # (M_target, M_target): head 0, query rows, key columns
    rows, cols = w.sum(-1), w.sum(-2)  # (M_target,), (M_target,)
    if L == 1:
        note = " ".join(n for n in (note, "With M_target=1 the weights are one 1 × 1 table: its one row and its one "
                                          "column are the same single weight, 1.") if n)
    records = [{"index": i, "sum over": s, "total": float(v)} for s, t in (("keys (row sums)", rows),
                                                                              ("queries (column sums)", cols))
               for i, v in enumerate(t)]
    values = {"row_sums_all_one": bool(torch.allclose(rows, torch.ones_like(rows), atol=1e-5)),
              "column_sums_all_one": bool(torch.allclose(cols, torch.ones_like(cols), atol=1e-5)),
              "zero_above_diagonal": bool((w.triu(1) == 0).all()), "first_row": w[0].tolist()}
    return Evidence("softmax_axis", "Row and column sums of the decoder's masked self-attention weights (head 0)",
                    values, records, {"kind": "bar", "x": "index", "y": "total", "color": "sum over"}, note,
                    SOFTMAX_AXIS_LABELS)


BATCH_FIRST_LABELS = {
    "ours": "our source embedding's shape, (N, M, E)",
    "pytorch_default": "output shape of PyTorch's encoder layer, default layout",
    "pytorch_batch_first_flag": "PyTorch's layer is batch_first by default",
}


def batch_first(cfg: TransformerConfig) -> Evidence:
    """PyTorch's nn.TransformerEncoderLayer with its default batch_first=False, on the meta device."""
    ours = (cfg.N, cfg.M, cfg.E)
    theirs = (cfg.M, cfg.N, cfg.E)
    with MetaShapeCache():  # shapes by rule, without PyTorch's slow first meta call
        layer = nn.TransformerEncoderLayer(cfg.E, cfg.nhead, cfg.d_ff, device="meta")
        out = layer(torch.empty(*theirs, device="meta"))  # (M, N, E)
    values = {"ours": ours, "pytorch_default": tuple(out.shape),
              "pytorch_batch_first_flag": layer.self_attn.batch_first}
    records = [{"layout": "ours (batch_first)", "axis": i, "size": s} for i, s in enumerate(ours)] + \
              [{"layout": "nn.Transformer default", "axis": i, "size": s} for i, s in enumerate(theirs)]
    return Evidence("batch_first", "Source embedding layout: ours against PyTorch's default", values, records,
                    {"kind": "bar", "x": "axis", "y": "size", "color": "layout"}, "",
                    BATCH_FIRST_LABELS)


def _shape_trace(cfg: TransformerConfig, shapes: Trace | None) -> Trace:
    """A shape-only trace of ``cfg``: ``shapes`` when it is one (the app has traced this config
    already), else a new one. At 96+96 layers a shape-only trace takes most of a second, and the
    quiz page, attention_shapes and pass_shapes each made their own of the same config."""
    if shapes is not None and shapes.shape_only and shapes.config == cfg:
        return shapes
    from .trace import trace  # here, not at the top: core.trace is the heavier import

    return trace(cfg, shape_only=True)


ATTENTION_SHAPES_LABELS = {
    "d_k": SIZE_LABELS["d_k"],
    "nhead": SIZE_LABELS["nhead"],
    "q_stacked": "Q of every head, stacked",
    "q_one_head": "Q of one head (K and V alike)",
    "weights": "attention weights, every head",
    "concat": "the heads concatenated",
}


def attention_shapes(cfg: TransformerConfig, shapes: Trace | None = None) -> Evidence:
    """The first encoder layer's self-attention, step by step, with the shapes a trace of this very
    config reads off its tensors. Shape-only (meta device), so any size costs milliseconds and the
    shapes are the ones a real pass gives (tests/core checks the two agree). ``shapes``: a
    shape-only trace of ``cfg`` already made, used instead of a new one (see _shape_trace)."""
    t = _shape_trace(cfg, shapes)
    steps = [  # (what, recorded hook or row key, formula, the row or extra of core.rows it shows, if any)
        ("input x (embedding + position)", "src.sum", "(N, M, E)", "summed_embedding"),
        ("Q = x W^Q + b, every head, stacked", "enc.0.self_attn.q", "(N, nhead, M, d_k)", "q_stacked"),
        ("one head's Q (K and V alike)", "qkv_one_head", "(N, M, d_k)", "qkv_one_head"),
        ("scores Q K^T / sqrt(d_k), plus the mask", "enc.0.self_attn.scores", "(N, nhead, M, M)",
         "scores_pre_softmax"),
        ("weights: softmax over the keys", "enc.0.self_attn.weights", "(N, nhead, M, M)", "attention_scores"),
        ("each head: weights @ V", "enc.0.self_attn.heads", "(N, nhead, M, d_k)", "heads_stacked"),
        ("heads concatenated", "enc.0.self_attn.concat", "(N, M, E)", "concatenated_heads"),
        ("after W^O", "enc.0.self_attn.out", "(N, M, E)", ""),
    ]
    # "key" names the row a question asks about, so the quiz can point at it (it is not shown).
    records = [{"step": what, "live shape": str(tuple(t.shapes[hook]) if hook in t.shapes else t.row(hook).shape),
                "formula": formula, "key": row}
               for what, hook, formula, row in steps]
    values = {"d_k": cfg.d_k, "nhead": cfg.nhead, "q_stacked": tuple(t.shapes["enc.0.self_attn.q"]),
              "q_one_head": t.row("qkv_one_head").shape, "weights": tuple(t.shapes["enc.0.self_attn.weights"]),
              "concat": tuple(t.shapes["enc.0.self_attn.concat"])}
    return Evidence("attention_shapes", "One attention block, step by step, with this config's shapes", values,
                    records, {"kind": "table"},
                    f"Read off a shape-only trace of this config: E = {cfg.E} splits into nhead = {cfg.nhead} "
                    f"heads of d_k = {cfg.d_k}, and the heads joined side by side are E wide again.",
                    ATTENTION_SHAPES_LABELS)


PASS_EXTRAS = ("target_tokens", "W_Q", "causal_mask", "key_padding_mask", "decoder_self_scores", "cross_scores",
               "ffn_hidden", "logits")  # the extras a shape question may ask about, shown after the 14 rows


def pass_shapes(cfg: TransformerConfig, shapes: Trace | None = None) -> Evidence:
    """The whole forward pass, tensor by tensor: the 14 rows of the explorer's table and the extras
    the quiz asks about, with their formulas and this config's live shapes. Shape-only (meta
    device), so it costs milliseconds at any size and gives the shapes a real pass gives.
    ``shapes``: as in attention_shapes."""
    t = _shape_trace(cfg, shapes)
    shown = [*t.rows, *(t.row(key) for key in PASS_EXTRAS)]
    # "key" names the row a question asks about, so the quiz can point at it (it is not shown).
    # The live shape before its formula, as in the explorer's table: a phone shows the first columns.
    records = [{"#": str(r.index) if r.index else "extra", "tensor": r.name, "live shape": str(r.shape),
                "formula": r.formula, "key": r.key} for r in shown]
    # The table is the evidence; beside it, what each symbol of the formulas stands for here.
    values = {"N": cfg.N, "M": cfg.M, "M_target": cfg.M_target, "E": cfg.E, "nhead": cfg.nhead, "d_k": cfg.d_k,
              "d_ff": cfg.d_ff, "vocab_size": cfg.vocab_size}
    return Evidence("pass_shapes", "The forward pass, tensor by tensor, with this config's shapes", values, records,
                    {"kind": "table"},
                    f"Read off a shape-only trace of this config (N={cfg.N}, M={cfg.M}, M_target={cfg.M_target}, "
                    f"E={cfg.E}, nhead={cfg.nhead}, vocab_size={cfg.vocab_size}): the same table as the explorer's.",
                    SIZE_LABELS)


EXPERIMENTS: dict[str, Callable[[TransformerConfig], Evidence]] = {
    f.__name__: f for f in (dependency_maps, permutation, residual_ablation, score_scaling, head_options,
                            ffn_layers, learned_positions, causal_probe, mask_counts, shift_right,
                            parameter_counts, softmax_axis, batch_first, attention_shapes, pass_shapes)
}


# The experiments that read a shape-only trace of the config, and take one made already.
TAKES_SHAPES = frozenset({"attention_shapes", "pass_shapes"})


def run(name: str, cfg: TransformerConfig, shapes: Trace | None = None) -> Evidence:
    """Run one experiment by name (see ``EXPERIMENTS``). ``shapes``, a trace of ``cfg`` the caller
    has already, spares the experiments in TAKES_SHAPES a trace of their own when it is shape-only;
    the others ignore it."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; choose one of {', '.join(EXPERIMENTS)}")
    if name in TAKES_SHAPES:
        return EXPERIMENTS[name](cfg, shapes)
    return EXPERIMENTS[name](cfg)


__all__ = ["Evidence", "EXPERIMENTS", "TAKES_SHAPES", "run", "bounded", *EXPERIMENTS]
