"""The sliding window on the Attention page: which layers to draw side by side, and what a layer's mask is.

Pure Python (no streamlit, no torch): it reads the config only (core.config.windowed says which layers
attend through the window), so the page renders and these words are unit-tested.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from render.diagram import ordinal
from render.words import counted

if TYPE_CHECKING:  # a type only: importing core's package imports torch
    from core.config import TransformerConfig


def layer_pair(cfg: TransformerConfig, layer: int) -> tuple[int, int] | None:
    """A windowed layer and a full one to draw side by side, (windowed, full): the layer on show and the nearest
    layer of the other kind (the lower one on a tie). None when the layers are all alike: no window, or a
    window in every layer (global_every = 0)."""
    if not cfg.window or not cfg.global_every:
        return None
    others = [i for i in range(cfg.layers) if cfg.windowed(i) != cfg.windowed(layer)]
    nearest = min(others, key=lambda i: (abs(i - layer), i))
    return (layer, nearest) if cfg.windowed(layer) else (nearest, layer)


def full_layers_words(cfg: TransformerConfig) -> str:
    """Which layers have no window, by the rule global_every sets."""
    k = cfg.global_every
    full = [i for i in range(cfg.layers) if not cfg.windowed(i)]
    listed = ", ".join(map(str, full[:3])) + (", …" if len(full) > 3 else "")
    plural = "s" if len(full) > 1 else ""
    return f"every {ordinal(k)} layer attends in full (global_every = {k}: layer{plural} {listed})"


def window_mask_note(cfg: TransformerConfig, layer: int) -> str:
    """What the mask beside a decoder-only layer's weights is, in a config with a window."""
    W = cfg.window
    if not cfg.windowed(layer):
        return (f"Causal mask: True above the diagonal. Layer {layer} has no window: {full_layers_words(cfg)}, so "
                f"query i sees every key 0..i, however far back.")
    note = (f"Sliding-window mask, W = {W}: True where blocked. Query i sees keys i − {W - 1} to i, the last W "
            "positions, itself included: later keys are blocked, as by the causal mask, and so is every key W or "
            "more behind, which leaves a band along the diagonal.")
    if cfg.M <= W:
        return note + (f" Here M = {cfg.M} ≤ W = {W}, so the band reaches back to key 0 for every query and blocks "
                       "nothing the causal mask does not: a window below M shows the band.")
    return note + (f" Stacked, each windowed layer reaches W − 1 = {counted(W - 1, 'position')} further back: after "
                   f"L windowed layers, up to L · (W − 1) positions.")


def pair_caption(cfg: TransformerConfig, windowed: int, full: int, head: int, item: int) -> str:
    """The words over the two maps drawn side by side."""
    return (f"Head {head} of sequence {item}, in layer {windowed} (windowed, W = {cfg.window}) and in layer {full} "
            f"(full: {full_layers_words(cfg)}). In the windowed layer each row's weights sit on at most its last "
            f"{counted(cfg.window, 'key')} and still sum to 1; in the full layer every row reaches back to key 0.")
