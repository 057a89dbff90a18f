"""Masks and the shifted target: what the causal mask blocks, how much of it, and how the decoder's
input is the target moved one step right (the masking and shifted-output questions)."""

from __future__ import annotations

import torch

from core.config import TransformerConfig
from core.model import Transformer, generate_square_subsequent_mask
from core.trace import BOS_ID
from .base import MAX_LEN, MAX_MASK_DRAWN, MAX_MASK_SIDE, SIZE_LABELS, Evidence, bounded, generator

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
    gen = generator(small.seed)
    low = min(2, small.vocab_size - 1)
    src = torch.randint(low, small.vocab_size, (1, small.M), generator=gen)  # (1, M)
    tgt = torch.randint(low, small.vocab_size, (1, T), generator=gen)  # (1, M_target)
    tgt[0, 0] = BOS_ID
    pos = T // 2  # T >= 2 (see above): a token after the start token, which stays as it is
    changed = tgt.clone()
    choices = small.vocab_size - low  # ids the batch draws from: low .. vocab_size-1
    old = int(tgt[0, pos])
    # Any other id: the next drawable one, or, with a single drawable id (vocab_size 2 or 3), the one after
    # it, wrapping to 0 so no id falls outside the vocabulary.
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
        mask = generate_square_subsequent_mask(T, device="meta")  # (M_target, M_target), no memory
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
    gen = generator(cfg.seed)
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
