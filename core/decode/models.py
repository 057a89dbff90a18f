"""The models decoding runs on, each with its own tokens: the shipped character-level language model (default),
the same model with untrained weights, and the training lab's reversal model.

The shipped model is a state dict (core/data/char_lm.pt) and its config with the vocabulary (char_lm.json),
made by ``python -m core.decode.train_default`` with the lab's own training code; it is loaded with
``torch.load(weights_only=True)``, which reads tensors only and runs no code from the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from ..config import TransformerConfig
from ..model import Transformer
from ..train import DATA_DIR, ReversalSettings, train_reversal

WEIGHTS_FILE = DATA_DIR / "char_lm.pt"
CONFIG_FILE = DATA_DIR / "char_lm.json"

CHAR_LM, UNTRAINED, REVERSAL = "char-lm", "untrained", "reversal"
MODEL_NAMES = {
    CHAR_LM: "Character LM, trained on Shakespeare",  # short: the page's model box is 2/5 of the width
    UNTRAINED: "Character LM, untrained (random weights)",
    REVERSAL: "Reversal model, trained in a few seconds",
}


@dataclass(frozen=True)
class DecodingModel:
    """A model and its tokens: ``labels[i]`` is token i as text; ``eos`` an optional end token (None for none)."""

    key: str
    name: str
    model: Transformer
    labels: tuple[str, ...]
    max_len: int
    newline: int | None  # the id of "\n", an end token the strategies may use; None if the model has none

    @property
    def vocab_size(self) -> int:
        return len(self.labels)

    def encode(self, text: str) -> list[int]:
        """A prompt's ids; raises ValueError naming the characters (at most five) the model has no token for."""
        if self.key == REVERSAL:
            return _reversal_ids(text, self.vocab_size - 1)
        ids = {c: i for i, c in enumerate(self.labels)}
        unknown = sorted({c for c in text if c not in ids})
        if unknown:
            shown = ", ".join(repr(c) for c in unknown[:5])
            raise ValueError(f"{len(unknown)} character(s) of the prompt are not in this model's {self.vocab_size}-"
                             f"character vocabulary: {shown}; use letters, digits and the usual punctuation")
        return [ids[c] for c in text]

    def decode(self, ids: list[int]) -> str:
        sep = " " if self.key == REVERSAL else ""
        return sep.join(self.labels[i] for i in ids)


def _reversal_ids(text: str, bos: int) -> list[int]:
    """The reversal model reads its start token, then symbols written as numbers 0 to bos - 1."""
    ids = [bos]
    for part in text.replace(",", " ").split():
        if not part.isdigit() or int(part) >= bos:
            raise ValueError(f"the reversal model reads numbers from 0 to {bos - 1} separated by spaces; "
                             f"{part[:20]!r} is not one")
        ids.append(int(part))
    return ids


def _with_bias(cfg: TransformerConfig) -> Transformer:
    """The decoder-only model with the lab's CausalLM's output bias (core.train.as_transformer)."""
    model = Transformer.from_config(cfg)
    model.generator = nn.Linear(cfg.E, cfg.vocab_size)
    return model


def shipped_info() -> dict:
    """The shipped model's JSON: its config, vocabulary and how it was trained."""
    return json.loads(CONFIG_FILE.read_text(encoding="utf-8"))


def load_char_lm(trained: bool = True) -> DecodingModel:
    """The shipped character LM, or (``trained=False``) the same layout with seeded, untrained weights."""
    info = shipped_info()
    cfg = TransformerConfig.from_dict(info["config"])
    model = _with_bias(cfg)
    if trained:
        model.load_state_dict(torch.load(WEIGHTS_FILE, weights_only=True, map_location="cpu"))
    model.requires_grad_(False).train(False)
    labels = tuple(info["vocab"])
    key = CHAR_LM if trained else UNTRAINED
    return DecodingModel(key, MODEL_NAMES[key], model, labels, cfg.max_len,
                         labels.index("\n") if "\n" in labels else None)


def load_reversal() -> DecodingModel:
    """The lab's reversal model, trained here with its default settings (seconds on one core)."""
    s = ReversalSettings()
    res = train_reversal(s, keep_model=True)
    trained = res.trained
    # One more position than the task's M: the start token and M symbols, so a whole [x, reverse(x)] fits.
    labels = tuple(str(i) for i in range(s.vocab_size)) + ("<start>",)
    return DecodingModel(REVERSAL, MODEL_NAMES[REVERSAL], trained.model.train(False), labels, s.M, None)


def load(key: str = CHAR_LM) -> DecodingModel:
    if key == CHAR_LM:
        return load_char_lm(True)
    if key == UNTRAINED:
        return load_char_lm(False)
    if key == REVERSAL:
        return load_reversal()
    raise ValueError(f"model={key!r} must be one of {', '.join(MODEL_NAMES)}")


def size_bytes() -> int:
    return Path(WEIGHTS_FILE).stat().st_size
