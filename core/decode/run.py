"""One decoding run from plain arguments: the prompt as text, the strategy and its knobs, on a named model.

The CLI and the app both come here, so a bad value gets the same message in each. The prompt is cut to the
model's context first: a learned positional table has ``max_len`` rows, so at most max_len - G prompt tokens
fit beside G new ones, and the last of them are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .models import DecodingModel
from .records import Decoding
from .strategies import MAX_NEW_TOKENS, beam_search, greedy, mbr, sample, teacher_forcing

STRATEGIES = ("greedy", "beam", "sample", "mbr")
MAX_PROMPT_CHARS = 100_000  # longer text is refused before it is read character by character


@dataclass(frozen=True)
class Run:
    """A run and what the learner should know about it: the prompt as the model read it, whether it was cut,
    each continuation as text, and teacher forcing's single pass over the chosen continuation."""

    decoding: Decoding
    prompt_text: str
    prompt_cut: int  # prompt tokens left out at the front to fit the context
    continuations: list[str]
    forced: Decoding | None


def decode(dm: DecodingModel, prompt: str, strategy: str = "greedy", G: int = 20, *, beams: int = 4,
           length_penalty: float = 1.0, early_stopping: bool | str = False, temperature: float = 1.0,
           top_k: int | None = None, top_p: float = 1.0, samples: int = 8, seed: int = 0,
           stop_at_newline: bool = False) -> Run:
    """Run ``strategy`` on ``prompt``; raises ValueError naming a bad value and a way out."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy={strategy!r} must be one of {', '.join(STRATEGIES)}")
    if not isinstance(prompt, str) or len(prompt) > MAX_PROMPT_CHARS:
        raise ValueError(f"the prompt must be text of at most {MAX_PROMPT_CHARS:,} characters")
    if isinstance(G, bool) or not isinstance(G, int) or not 1 <= G < min(dm.max_len, MAX_NEW_TOKENS + 1):
        raise ValueError(f"max_new_tokens={G!r} must be a whole number from 1 to {min(dm.max_len - 1, MAX_NEW_TOKENS)} "
                         f"(this model reads at most {dm.max_len} tokens, the prompt's included)")
    ids = dm.encode(prompt)
    if not ids:
        raise ValueError("the prompt is empty; type a few characters for the model to continue")
    room = dm.max_len - G
    cut = max(0, len(ids) - room)
    ids = ids[cut:]
    x = torch.tensor([ids])  # (1, M)
    eos = dm.newline if stop_at_newline else None
    if strategy == "greedy":
        d = greedy(dm.model, x, G, eos)
    elif strategy == "beam":
        d = beam_search(dm.model, x, G, beams, length_penalty, early_stopping, eos)
    elif strategy == "sample":
        d = sample(dm.model, x, G, temperature, top_k, top_p, seed, eos)
    else:
        d = mbr(dm.model, x, G, samples, temperature, top_k, top_p, seed, eos)
    chosen = d.generated[0]
    forced = teacher_forcing(dm.model, x, torch.tensor([chosen])) if chosen else None
    return Run(d, dm.decode(ids), cut, [dm.decode(g) for g in d.generated], forced)
