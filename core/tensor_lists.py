"""A tensor as nested lists of plain Python numbers, every one JSON-able: for the CLI's JSON and the pages."""

from __future__ import annotations

import math
from typing import Any

from torch import Tensor

MAX_VALUES = 4096  # elements a tensor may have to be shown whole


def _finite(x: Any) -> Any:
    """JSON has no infinity: a masked score (-inf, which softmax turns into 0) becomes None."""
    return x if not isinstance(x, float) or math.isfinite(x) else None


def plain_values(t: Tensor) -> Any:
    """A tensor as nested lists of Python numbers (bools for a mask), every one JSON-able."""
    def walk(x: Any) -> Any:
        return [walk(v) for v in x] if isinstance(x, list) else _finite(x)
    return walk(t.detach().cpu().tolist())
