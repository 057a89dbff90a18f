"""``python -m core.decode.train_default``: train the shipped character LM with the lab's code and save it.

It runs core.train.train_lm on the lab's Shakespeare passages (core/data/passages.txt) on one core, then
writes the weights as a state dict (core/data/char_lm.pt) and the config, vocabulary and training figures
as JSON (core/data/char_lm.json). The same seed gives the same file.
"""

from __future__ import annotations

import json
import sys

import torch

from ..config import TransformerConfig
from ..train import LMSettings, as_transformer, load_text, train_lm
from .models import CONFIG_FILE, WEIGHTS_FILE

# Small enough to train in minutes and ship, large enough to spell; no held-out part (the shifted copies
# would leak it).
SETTINGS = LMSettings(tokenizer="char", M=64, E=64, nhead=4, layers=2, d_ff=256, N=32, steps=300, lr=3e-3, seed=0,
                      samples=0, val_fraction=0.0)
SHIFTS = range(0, SETTINGS.M + 1, 5)  # where the copies of the text start


def shifted_copies(text: str) -> str:
    """The text rotated by each of SHIFTS, joined: the lab cuts a text into fixed pieces of M + 1 characters, so
    a line always sat at the same positions and the model learned it there only (a prompt typed at position 0
    got gibberish). In the copies each line sits at many positions of a piece."""
    return "".join(text[s:] + text[:s] for s in SHIFTS)


def main() -> int:
    res = train_lm(SETTINGS, text=shifted_copies(load_text()), keep_model=True)
    lm, tok = res.trained
    cfg = TransformerConfig(arch="decoder-only", N=1, M=SETTINGS.M, E=SETTINGS.E, nhead=SETTINGS.nhead,
                            layers=SETTINGS.layers, d_ff=SETTINGS.d_ff, vocab_size=len(tok), positional="learned",
                            max_len=SETTINGS.M, seed=SETTINGS.seed)
    model = as_transformer(lm, cfg)
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    torch.save(state, WEIGHTS_FILE)
    info = {"config": cfg.to_dict(), "vocab": tok.vocab, "training": res.settings, "steps_done": res.steps_done,
            "final_loss": res.loss[-1], "text": "core/data/passages.txt, rotated by each of "
            f"{list(SHIFTS)} characters", "uniform_loss": res.uniform_loss,
            "command": "python -m core.decode.train_default"}
    CONFIG_FILE.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    print(f"{res.steps_done} steps in {res.seconds:.1f} s, loss {res.loss[-1]:.3f} (uniform {res.uniform_loss:.3f}); "
          f"wrote {WEIGHTS_FILE.name} ({WEIGHTS_FILE.stat().st_size:,} bytes) and {CONFIG_FILE.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
