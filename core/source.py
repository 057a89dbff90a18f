"""The lines of core/model.py (or core/experts.py, core/latent_attention.py, core/relative_bias.py) that produce a
recorded tensor, for the explorer's 'show code'.

Every recorded tensor passes through ``record(rec, <name>, ...)``; the lines that make it are
those between the previous ``record`` call in the same method and this one.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from functools import lru_cache

from . import experts, latent_attention, model, relative_bias

# Which method records a hook, judged by the hook's pattern; the last name part is the record name.
_METHODS = (
    (re.compile(r"^(src|tgt)\.(\w+)$"), model.Transformer.embed, lambda m: f'which + ".{m.group(2)}"'),
    (re.compile(r"^(enc|dec|block)\.\d+\.(self_attn|cross_attn)\.(\w+)$"), model.MultiHeadAttention.forward,
     lambda m: f'prefix + "{m.group(3)}"'),
    (re.compile(r"^(enc|dec)\.\d+\.ffn\.(router_logits|top_k_experts|top_k_weights)$"), experts.Experts.route,
     lambda m: f'prefix + "{m.group(2)}"'),
    (re.compile(r"^(enc|dec)\.\d+\.ffn\.(tokens_per_expert|expert0\.in)$"), experts.Experts.forward,
     lambda m: f'prefix + "{m.group(2)}"'),
    (re.compile(r"^(enc|dec)\.\d+\.ffn\.expert0\.(hidden|out)$"), experts.StackedExperts.forward,
     lambda m: f'prefix + "{m.group(2)}"'),
    (re.compile(r"^(enc|dec)\.\d+\.ffn\.expert0\.(gate|up)$"), experts.StackedExperts.activate,
     lambda m: f'prefix + "{m.group(2)}"'),
    (re.compile(r"^(enc|dec)\.\d+\.ffn\.shared\.(hidden|out)$"), model.FeedForward.forward,
     lambda m: f'prefix + "{m.group(2)}"'),
    (re.compile(r"^(enc|dec)\.\d+\.ffn\.shared\.(gate|up)$"), model.FeedForward.activate,
     lambda m: f'prefix + "{m.group(2)}"'),
    (re.compile(r"^(enc|dec|block)\.\d+\.ffn\.(\w+)$"), model.FeedForward.forward,
     lambda m: f'prefix + "{m.group(2)}"'),
    (re.compile(r"^(enc|dec)\.\d+\.ffn\.(gate|up)$"), model.FeedForward.activate, lambda m: f'prefix + "{m.group(2)}"'),
    (re.compile(r"^(enc|dec)\.(relative_buckets|relative_bias)$"), relative_bias.RelativePositionBias.forward,
     lambda m: f'prefix + "{m.group(2)}"'),
    (re.compile(r"^enc\.\d+\.(\w+)$"), model.EncoderLayer.forward, lambda m: f'prefix + "{m.group(1)}"'),
    (re.compile(r"^dec\.\d+\.(\w+)$"), model.DecoderLayer.forward, lambda m: f'prefix + "{m.group(1)}"'),
    (re.compile(r"^memory$"), model.Transformer.encode, lambda m: '"memory"'),
    (re.compile(r"^dec\.out$"), model.Transformer.decode, lambda m: '"dec.out"'),
    (re.compile(r"^logits$"), model.Transformer.output, lambda m: '"logits"'),
    (re.compile(r"^probs$"), model.Transformer.forward, lambda m: '"probs"'),
)


# Under latent attention (attention="mla") the self-attention's hooks are recorded by its own module.
_LATENT = {model.MultiHeadAttention.forward: latent_attention.LatentAttention.forward}
_LATENT_QUERY = (re.compile(r"^(enc|dec)\.\d+\.self_attn\.(q_latent)$"), latent_attention.LatentAttention.query,
                 lambda m: 'prefix + "q_latent"')


@lru_cache(maxsize=None)
def source_for(hook: str, attention: str = "mha") -> str:
    """'file:line' header plus the code lines that compute ``hook``; '' when not in the model."""
    methods = _METHODS if attention == "mha" else (
        _LATENT_QUERY, *((p, _LATENT.get(m, m), n) for p, m, n in _METHODS))
    for pattern, method, needle_of in methods:
        match = pattern.match(hook)
        if not match or (attention != "mha" and ".cross_attn." in hook):
            continue
        lines, start = inspect.getsourcelines(method)
        # The signature may run over several lines; the body starts after the one ending with ':'.
        body_start = next(j for j, line in enumerate(lines) if line.split("#")[0].rstrip().endswith(":")) + 1
        needle = f"record(rec, {needle_of(match)}"
        for i, line in enumerate(lines):
            if needle in line:
                first = i
                while first > body_start and "record(" not in lines[first - 1] and '"""' not in lines[first - 1]:
                    first -= 1
                # dedent, not cleandoc: cleandoc strips the first line whole and the rest by their common
                # indent, so 'if rec is not None:' and the line inside it came out level.
                body = textwrap.dedent("".join(lines[first:i + 1]).replace("\t", "    ")).strip("\n")
                where = f"# core/{method.__module__.rsplit('.', 1)[-1]}.py, {method.__qualname__}, line {start + first}"
                return where + "\n" + body
    return ""
