"""The numbers of a pass, as plain values: whole small tensors, or a slice of a large one, labelled by tokens.

A learner reads the values beside the shapes. A tensor of at most MAX_VALUES elements is shown whole;
of a larger one, the learner picks a batch item and a head and sees its first rows and columns.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from torch import Tensor

if TYPE_CHECKING:
    from .trace import Trace

MAX_VALUES = 4096  # elements a tensor may have to be shown whole
SLICE = 16  # rows and columns of a slice, by default

_SYMBOL = re.compile(r"[A-Za-z_]+")


def _finite(x: Any) -> Any:
    """JSON has no infinity: a masked score (-inf, which softmax turns into 0) becomes None."""
    return x if not isinstance(x, float) or math.isfinite(x) else None


def plain_values(t: Tensor) -> Any:
    """A tensor as nested lists of Python numbers (bools for a mask), every one JSON-able."""
    def walk(x: Any) -> Any:
        return [walk(v) for v in x] if isinstance(x, list) else _finite(x)
    return walk(t.detach().cpu().tolist())
