"""What a question is, and the context its expected answer is computed in.

A question is data: a prompt (a template over the config's symbols), a kind, stored choices if it
has any, a short explanation in plain words, the experiment whose evidence it shows, and an
``answer`` rule. The rule is a small function of a ``Context``: it reads the live trace or a live
experiment for the learner's current config. Shape and number answers, and the outcome of every
question decided by an experiment, are never written in the bank; only conceptual questions, whose
answer no run can decide (why an RNN cannot be parallelised, say), store their right choice with
``fixed``, and they still show live evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from core import TransformerConfig, trace as run_trace
from core.config import ARCHS, ATTENTIONS, windowed
from quizzes.experiments import Evidence, run as run_experiment
from core.tokens import TokenizedText
from core.trace import Trace

KINDS = ("choice", "numeric", "shape", "predict")
# The families a question may be limited to (Question.families).
PAPER = ("encoder-decoder",)
DECODER_ONLY = ("decoder-only",)
ENCODER_ONLY = ("encoder-only",)
ONE_STACK = ("decoder-only", "encoder-only")
WITH_ENCODER = ("encoder-decoder", "encoder-only")
WITH_DECODER = ("encoder-decoder", "decoder-only")


# The parts an older question's wording or experiment assumes (Question.when).
def multi_head(c: TransformerConfig) -> bool:
    """Every query head has K/V heads of its own: W^K and W^V are E x E."""
    return c.nhead_kv == c.nhead


def head_projections(c: TransformerConfig) -> bool:
    """Each head's queries come from a W^Q of its own columns: multi-head attention, not latent attention."""
    return c.attention != "mla"


def paper_norms(c: TransformerConfig) -> bool:
    """A LayerNorm after each residual sum, as in the paper."""
    return c.norm == "layernorm" and not c.norm_first


def paper_layer(c: TransformerConfig) -> bool:
    """The paper's layer whole: post-norm LayerNorm, a ReLU FFN, biases and multi-head attention, as the
    experiments that build their own layers build them."""
    return paper_norms(c) and c.activation == "relu" and c.bias and multi_head(c) and even_heads(c) and not c.qk_norm


# What the older counts and experiments assume of the heads, the norms, the first FFN and the cache.
def even_heads(c: TransformerConfig) -> bool:
    """Heads of d_k = E / nhead (no head_dim of their own)."""
    return c.head_dim == c.E // c.nhead


def no_qk_norm(c: TransformerConfig) -> bool:
    return not c.qk_norm


def dense_first_layer(c: TransformerConfig) -> bool:
    """Layer 0's FFN is dense, not experts."""
    return not c.has_experts(0)


def full_cache(c: TransformerConfig) -> bool:
    """Every layer keeps every position's K and V: no window caps them, and the heads are d_k = E / nhead wide."""
    return not c.window and even_heads(c)


def added_positions(c: TransformerConfig) -> bool:
    """A positional table added to the embeddings (not RoPE, not none)."""
    return c.positional in ("sinusoidal", "learned")


# The later parts a question may ask about (Question.when): each is shown only where the config has it.
def with_experts(c: TransformerConfig) -> bool:
    """A mixture of experts in place of the FFN (n_experts > 0)."""
    return c.moe


def with_shared_experts(c: TransformerConfig) -> bool:
    return c.moe and c.n_shared_experts > 0


def latent(c: TransformerConfig) -> bool:
    """Multi-head latent attention (DeepSeek's)."""
    return c.attention == "mla"


def with_window(c: TransformerConfig) -> bool:
    """A sliding window on (some of) the layers."""
    return c.window > 0


def with_qk_norm(c: TransformerConfig) -> bool:
    return c.qk_norm


def with_head_dim(c: TransformerConfig) -> bool:
    """Heads whose width d_k is not E / nhead (Qwen3's head_dim)."""
    return c.head_dim != c.E // c.nhead
KIND_LABELS = {"choice": "multiple choice", "numeric": "numeric", "shape": "shape",
               "predict": "predict, then run"}


class Context:
    """The config a learner is looking at, its trace, and the experiments run on it so far.

    ``trace`` and ``runner`` can be handed in (the app passes its cached versions); otherwise they
    are computed here on first use and kept for this context's lifetime.
    """

    def __init__(self, cfg: TransformerConfig, trace: Trace | None = None,
                 runner: Callable[[str, TransformerConfig], Evidence] | None = None, text: TokenizedText | None = None):
        self.cfg = cfg
        self.text = text  # the learner's own text (the "Your text" box), for the questions on it
        self._trace = trace
        self._runner = runner or run_experiment
        self._evidence: dict[str, Evidence] = {}

    @property
    def trace(self) -> Trace:
        if self._trace is None:
            self._trace = run_trace(self.cfg)
        return self._trace

    def evidence(self, name: str) -> Evidence:
        if name not in self._evidence:
            self._evidence[name] = self._runner(name, self.cfg)
        return self._evidence[name]

    def value(self, experiment: str, key: str) -> Any:
        return self.evidence(experiment).values[key]

    @property
    def symbols(self) -> dict[str, Any]:
        """What a prompt template may mention: the learner's symbols for this config."""
        return symbols_of(self.cfg)


def symbols_of(c: TransformerConfig) -> dict[str, Any]:
    """The learner's symbols (N, M, E, d_k, ...) and their values at config ``c``."""
    return {"N": c.N, "M": c.M, "M_target": c.M_target, "E": c.E, "nhead": c.nhead, "nhead_kv": c.nhead_kv,
            "d_k": c.d_k, "d_ff": c.d_ff, "vocab_size": c.vocab_size, "layers": c.layers, "max_len": c.max_len,
            "max_len_plus_one": c.max_len + 1, "positional": c.positional, "arch": c.arch,
            "relative_buckets": c.relative_buckets, "relative_max_distance": c.relative_max_distance,
            **part_symbols(c)}


def part_symbols(c: TransformerConfig) -> dict[str, int]:
    """The symbols of the later parts, only where the config has them: a dense model has no top_k to name."""
    out: dict[str, int] = {}
    if c.moe:
        out |= {"n_experts": c.n_experts, "top_k": c.top_k, "d_ff_expert": c.d_ff_expert,
                "n_shared_experts": c.n_shared_experts, "first_dense_layers": c.first_dense_layers}
    if c.attention == "mla":
        out |= {"kv_lora_rank": c.kv_lora_rank, "q_lora_rank": c.q_lora_rank, "rope_head_dim": c.rope_head_dim,
                "nope_head_dim": c.nope_head_dim, "v_head_dim": c.v_head_dim}
    if c.window:
        out |= window_symbols(c.M, c.layers, c.window, c.global_every)
    return out


def window_symbols(M: int, layers: int, window: int, global_every: int) -> dict[str, int]:
    """A window's symbols, and the ones the cache's formula names: the positions a windowed layer keeps
    (M_window) and how many layers are windowed or full."""
    count = sum(windowed(i, window, global_every) for i in range(layers))
    return {"window": window, "global_every": global_every, "M_window": min(M, window), "windowed_layers": count,
            "global_layers": layers - count}


Rule = Callable[[Context], Any]


@dataclass(frozen=True)
class Question:
    """One quiz question. ``answer(ctx)`` gives the expected answer for ``ctx.cfg``.

    Expected answers are a tuple of ints (shape), a number (numeric; ``tolerance`` is relative),
    or one of the choices' texts (choice, predict). ``parametric`` marks answers that change
    with the config; the tests hold the bank to that claim.
    """

    id: str
    topic: str
    kind: str
    prompt: str
    answer: Rule
    evidence: str
    explanation: str
    choices: tuple[str, ...] = ()
    parametric: bool = False
    tolerance: float = 0.0
    # "millions": the question asks in millions; "count": a count, which a reply may round with a unit,
    # K, M or B ('63.1M', read as 63,100,000 and not as 63.1 times the symbol M; see check.parse_rounded_count).
    unit: str = ""
    # The sizes a question names in its own text (Llama-2-70B's E=8192, say), when they are not the
    # sidebar's: a reply written in symbols ('3*E^2') is read at these, as the learner meant it.
    sizes: TransformerConfig | None = None
    # The answer's formula in the learner's symbols: a reply in symbols must be this one, not another equal at
    # this config (check.same_formula); a function of the config when the formula depends on it.
    expression: str | Callable[[TransformerConfig], str] = ""
    # The families the question is about; ``when`` narrows it to the parts its wording or experiment assumes.
    families: tuple[str, ...] = ARCHS
    when: Callable[[TransformerConfig], bool] | None = None
    # The attentions whose model the question is about: the older questions read multi-head attention's
    # per-head W^Q, W^K and W^V, which latent attention has not; a question that holds for both says so.
    attention: tuple[str, ...] = ("mha",)
    # A sentence the prompt adds where the question is asked of something other than it says at first (the
    # example text, say, when the learner's repeats no token); '' where it needs none.
    aside: Callable[[Context], str] | None = None
    # The other answers that are just as right, when the run has more than one (a maximum shared by two
    # positions): marked right too (check.mark).
    ties: Callable[[Context], tuple[Any, ...]] | None = None

    def __post_init__(self) -> None:
        if not self.families or not set(self.families) <= set(ARCHS):
            raise ValueError(f"question {self.id}: families {self.families!r} must be some of {ARCHS}")
        if self.kind not in KINDS:
            raise ValueError(f"question {self.id}: kind {self.kind!r} must be one of {KINDS}")
        if self.kind in ("choice", "predict") and len(self.choices) < 2:
            raise ValueError(f"question {self.id}: a {self.kind} question needs at least two choices")
        if not self.attention or not set(self.attention) <= set(ATTENTIONS):
            raise ValueError(f"question {self.id}: attention {self.attention!r} must be some of {ATTENTIONS}")

    def applies(self, cfg: TransformerConfig) -> bool:
        """Whether the question asks something true of ``cfg``'s model: its family, and its parts if it names any."""
        return (cfg.arch in self.families and cfg.attention in self.attention
                and (self.when is None or self.when(cfg)))

    @property
    def stored(self) -> bool:
        """Whether the right answer is written in the bank (a conceptual question's, by ``fixed``), not
        computed from a live run. The README counts these; the rest follow the model."""
        return getattr(self.answer, "stored", False)

    def text(self, ctx: Context) -> str:
        """The prompt with the config's numbers filled in (templates are ours, never user text)."""
        text = self.prompt.format(**ctx.symbols)
        aside = self.aside(ctx) if self.aside is not None else ""
        return f"{text} {aside}" if aside else text

    def reading_symbols(self, ctx: Context) -> dict[str, Any]:
        """The values a reply's symbols stand for: the sizes the question names, else the sidebar's."""
        return symbols_of(self.sizes) if self.sizes is not None else ctx.symbols

    def formula(self, ctx: Context, cfg: TransformerConfig | None = None) -> str | None:
        """The answer in symbols: the formula of the row whose shape is asked, e.g. '(N, M, E)', or the
        question's ``expression``; None if there is none. A reply in symbols is checked against it
        (quizzes.check.same_formula). ``cfg``, when given, is the config an earlier attempt was
        answered at: the page shows that attempt's formula, not the sidebar's."""
        if self.row is not None:
            return ctx.trace.row(self.row).formula
        expression = self.expression(cfg or ctx.cfg) if callable(self.expression) else self.expression
        return expression or None

    @property
    def row(self) -> str | None:
        """The row or extra of the pass (a core.rows key) whose shape this question asks for, when its
        answer reads one (``row_shape``): the evidence marks that row. None for other questions."""
        return getattr(self.answer, "row", None)

    def expected(self, ctx: Context) -> Any:
        value = self.answer(ctx)
        if self.kind in ("choice", "predict") and value not in self.choices:
            raise ValueError(f"question {self.id}: computed answer {value!r} is not one of its choices")
        return value


# Answer rules: small builders so a bank file reads like data.

def row_shape(key: str) -> Rule:
    """The live shape of one of the 14 rows or extras (core.rows), e.g. 'attention_scores'.

    The rule keeps the key as ``row``, so the question can say which row its evidence should
    point at (``Question.row``).
    """
    def rule(ctx: Context) -> tuple[int, ...]:
        return tuple(ctx.trace.row(key).shape)

    rule.row = key
    return rule


def hook_shape(hook: str) -> Rule:
    """The live shape of any recorded tensor, by its hook name, e.g. 'dec.0.cross_attn.q'."""
    return lambda ctx: tuple(ctx.trace.shapes[hook])


def param(group: str) -> Rule:
    """A live parameter count from the trace, e.g. 'total' or 'positional table'."""
    return lambda ctx: int(ctx.trace.params[group])


def value(experiment: str, key: str, transform: Callable[[Any], Any] | None = None) -> Rule:
    """A number an experiment measured, optionally transformed (e.g. to millions)."""
    if transform is None:
        return lambda ctx: ctx.value(experiment, key)
    return lambda ctx: transform(ctx.value(experiment, key))


def outcome(experiment: str, decide: Callable[[dict[str, Any]], int], choices: tuple[str, ...]) -> Rule:
    """The choice an experiment's result selects: ``decide(values)`` returns the choice's index."""
    return lambda ctx: choices[decide(ctx.evidence(experiment).values)]


def fixed(index: int, choices: tuple[str, ...]) -> Rule:
    """A conceptual question's stored right choice (its evidence is still computed live)."""
    def rule(ctx: Context) -> str:
        return choices[index]

    rule.stored = True  # read by Question.stored
    return rule


def compare(a: float, b: float, rel: float = 0.02) -> int:
    """0 if a < b, 1 if a > b, 2 if they are within ``rel`` of each other."""
    if abs(a - b) <= rel * max(abs(a), abs(b), 1e-12):
        return 2
    return 0 if a < b else 1


def millions(n: int) -> float:
    return round(n / 1e6, 1)
