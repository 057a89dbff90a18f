"""What a decoding run recorded, as plain values: each tensor's name, shape and (when small) its numbers.

A page, the CLI's JSON and the quiz read these; none of them touches torch. A record keeps its values only up
to ``MAX_VALUES`` numbers: a KV cache's keys are recorded by their shape alone.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from torch import Tensor

MAX_VALUES = 4096  # numbers a record lists; past that only the shape


@dataclass(frozen=True)
class Record:
    """One recorded tensor: its name, shape, values as nested lists (None when too many) and a line on it."""

    name: str
    shape: tuple[int, ...]
    values: Any = None
    note: str = ""


def record(name: str, tensor: Tensor, note: str = "", keep_values: bool = True) -> Record:
    """A tensor as a Record; -inf (a filtered-out logit) becomes None in the lists, so JSON can hold it."""
    values = None
    if keep_values and tensor.numel() <= MAX_VALUES:
        t = tensor.detach().cpu()
        values = t.tolist() if not t.is_floating_point() or bool(t.isfinite().all()) else _finite(t.tolist())
    return Record(name=name, shape=tuple(tensor.shape), values=values, note=note)


def shape_only(name: str, shape: tuple[int, ...], note: str = "") -> Record:
    return Record(name=name, shape=tuple(shape), note=note)


def _finite(x: Any) -> Any:
    if isinstance(x, list):
        return [_finite(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


@dataclass(frozen=True)
class Step:
    """One generated position: which it is (0 is the first new token) and the tensors it made."""

    index: int
    records: tuple[Record, ...]

    def get(self, name: str) -> Record:
        for r in self.records:
            if r.name == name:
                return r
        raise KeyError(f"step {self.index} recorded no {name!r}; it has {[r.name for r in self.records]}")


@dataclass(frozen=True)
class Decoding:
    """A whole run: the strategy and its settings, the prompt's ids (one list per sequence), every step,
    what the run kept besides (finished hypotheses, MBR's matrix), and ``generated``: the chosen
    continuation's ids, one list per sequence, the prompt left out."""

    strategy: str
    settings: dict
    prompt: list[list[int]]
    steps: tuple[Step, ...]
    generated: list[list[int]]
    extras: tuple[Record, ...] = field(default=())

    def extra(self, name: str) -> Record:
        for r in self.extras:
            if r.name == name:
                return r
        raise KeyError(f"{self.strategy} kept no {name!r}")

    def to_dict(self) -> dict:
        return asdict(self)
