"""Order and position: what an RNN's steps, attention's parallel pass and positional encodings do
with the order of a sequence (the RNN-against-Transformer and positional-encoding questions)."""

from __future__ import annotations

import math
from typing import Any, Callable

import torch
from torch import Tensor, nn

from core.config import TransformerConfig
from core.model import DecoderLayer, EncoderLayer, PositionalEncoding, generate_square_subsequent_mask, sinusoidal_table
from core.weights import seeded
from .base import (MAX_GRU_ELEMENTS, MAX_GRU_STEPS, MAX_GRU_WIDTH, MAX_GRU_WORK, MAX_LEN, MAX_WIDTH, Evidence, bounded,
                   generator, raised_note)


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
    nudge = torch.randn(E, generator=generator(seed + 7))  # (E,)
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
    gen, bound = generator(seed), 1.0 / math.sqrt(E)
    with torch.no_grad():
        for p in gru.parameters():
            p.uniform_(-bound, bound, generator=gen)
    return gru


def _gru_sizes(cfg: TransformerConfig) -> tuple[int, int, int]:
    """(N, M, E) for the real nn.GRU(E, E) run behind the GRU's shape and step count.

    The learner's own sizes when that run is cheap (see MAX_GRU_WORK and its neighbours), so the
    evidence shows their shape as measured. Otherwise N and E are capped as for the maps, but M
    is kept up to MAX_GRU_STEPS: the steps are then still counted at the learner's length. (The
    meta device cannot help: PyTorch's GRU on meta steps through Python meta kernels one step at a
    time, which at the sliders' largest sizes takes longer than the real run.)
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
    batch = torch.randn(N, M, E, generator=generator(seed + 2))  # (N, M, E), the encoder's input shape
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
    # A one-position map fits every choice of the map questions at once, so a one-token sequence is
    # measured at two positions (the note says so).
    L, T, E = max(small.M, 2), max(small.M_target, 2), small.E
    gru = _seeded_gru(E, small.seed)
    enc = seeded(EncoderLayer, E, small.nhead, small.d_ff, seed=small.seed)
    dec = seeded(DecoderLayer, E, small.nhead, small.d_ff, seed=small.seed)
    x = torch.randn(1, L, E, generator=generator(small.seed)) + sinusoidal_table(L, E)  # (1, M, E)
    target = torch.randn(1, T, E, generator=generator(small.seed))  # (1, M_target, E): x's draws, when T = M
    target = target + sinusoidal_table(T, E)  # (1, M_target, E)
    memory = torch.randn(1, L, E, generator=generator(small.seed + 1))  # (1, M, E)
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
    enc = seeded(EncoderLayer, E, small.nhead, small.d_ff, seed=small.seed).train(False)
    x = torch.randn(1, L, E, generator=generator(small.seed))  # (1, L, E)
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
                    # Down the side: under the bars the two names would be cut short.
                    {"kind": "bar", "x": "input", "y": "max |difference|", "horizontal": "true"}, note,
                    PERMUTATION_LABELS)


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
