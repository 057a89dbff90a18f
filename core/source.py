"""The lines of core/model.py that produce a recorded tensor, for the explorer's 'show code'.

Every recorded tensor passes through ``record(rec, <name>, ...)``; the lines that make it are
those between the previous ``record`` call in the same method and this one.
"""

from __future__ import annotations

import inspect
import re
from functools import lru_cache

from . import model

# Which method records a hook, judged by the hook's pattern; the last name part is the record name.
_METHODS = (
    (re.compile(r"^(src|tgt)\.(\w+)$"), model.Transformer.embed, lambda m: f'which + ".{m.group(2)}"'),
    (re.compile(r"^(enc|dec|block)\.\d+\.(self_attn|cross_attn)\.(\w+)$"), model.MultiHeadAttention.forward,
     lambda m: f'prefix + "{m.group(3)}"'),
    (re.compile(r"^(enc|dec|block)\.\d+\.ffn\.(\w+)$"), model.FeedForward.forward, lambda m: f'prefix + "{m.group(2)}"'),
    (re.compile(r"^enc\.\d+\.(\w+)$"), model.EncoderLayer.forward, lambda m: f'prefix + "{m.group(1)}"'),
    (re.compile(r"^dec\.\d+\.(\w+)$"), model.DecoderLayer.forward, lambda m: f'prefix + "{m.group(1)}"'),
    (re.compile(r"^memory$"), model.Transformer.encode, lambda m: '"memory"'),
    (re.compile(r"^dec\.out$"), model.Transformer.decode, lambda m: '"dec.out"'),
    (re.compile(r"^(logits|probs)$"), model.Transformer.forward, lambda m: f'"{m.group(1)}"'),
)


@lru_cache(maxsize=None)
def source_for(hook: str) -> str:
    """'file:line' header plus the code lines that compute ``hook``; '' when not in the model."""
    for pattern, method, needle_of in _METHODS:
        match = pattern.match(hook)
        if not match:
            continue
        lines, start = inspect.getsourcelines(method)
        needle = f"record(rec, {needle_of(match)}"
        for i, line in enumerate(lines):
            if needle in line:
                first = i
                while first > 0 and "record(" not in lines[first - 1] and '"""' not in lines[first - 1] \
                        and not lines[first - 1].lstrip().startswith("def "):
                    first -= 1
                body = inspect.cleandoc("".join(lines[first:i + 1]).replace("\t", "    "))
                where = f"# core/model.py, {method.__qualname__}, line {start + first}"
                return where + "\n" + body
    return ""
