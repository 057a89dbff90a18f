"""Small live training runs: the reversal task that tests the causal mask, and a tiny language model.

Both train ``CausalLM`` (core's EncoderLayer under a causal mask) on next-token prediction, on the
CPU, in seconds. Each run takes frozen, validated settings, reports progress through a callback
that can stop it, and returns plain Python values (lists, floats, strings): the model and its
tensors are dropped when the run ends, so nothing a page keeps holds memory.

Legend for the shape comments:
    N batch   M sequence length   E embedding size   V model vocabulary (task symbols + 1 for BOS)

The reversal task (Jacob Hilton's curriculum, chapter 1): a sequence is ``[x, reverse(x)]`` with
x random. A model that only sees the past cannot guess x (accuracy 1/vocab_size, chance) but can
copy the mirror image of x once it has seen it (accuracy near 1). Remove the mask and the model
sees the token it is asked to predict, so it "predicts" the random half too: a wrong mask shows.

``python -m core.train --task reverse --seed 0 --json`` prints the result as JSON.
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from .cli import OneLineParser, run_main
from .config import MAX_SEED, TransformerConfig, divisors
from .model import CausalLM, Transformer, build_causal_lm
from .tokens import START_TOKEN, TokenBatch
from .trace import Trace, trace

DATA_DIR = Path(__file__).resolve().parent / "data"
TEXT_FILE = DATA_DIR / "passages.txt"


# --------------------------------------------------------------------------------------------
# Progress and stopping


@dataclass(frozen=True)
class Progress:
    """One training step's report: plain numbers a page can draw without touching torch."""

    step: int  # steps done so far, 1..steps
    steps: int  # steps planned
    loss: float  # this step's training loss (mean cross-entropy, nats per token)
    seconds: float  # wall time since the run started


# A callback gets each step's Progress; returning False asks the run to stop after that step.
ProgressCallback = Callable[[Progress], "bool | None"]


def _check(name: str, value, low, high) -> None:
    if not (low <= value <= high):
        raise ValueError(f"{name}={value} must be between {low} and {high}")


def _check_model(E: int, nhead: int, layers: int, d_ff: int) -> None:
    _check("E", E, 2, 512)
    if nhead < 1 or E % nhead:
        raise ValueError(f"nhead={nhead} must divide E={E}; try one of {divisors(E)}")
    _check("layers", layers, 1, 8)
    _check("d_ff", d_ff, 1, 4096)


def _check_run(N: int, steps: int, lr: float, max_seconds: float | None, seed: int) -> None:
    _check("N", N, 1, 1024)
    # As TransformerConfig bounds it: a negative seed reached numpy as "expected non-negative integer",
    # and one past 64 bits torch as "Overflow when unpacking long long", neither naming the seed.
    _check("seed", seed, 0, MAX_SEED)
    _check("steps", steps, 1, 100_000)
    if not (0 < lr <= 1) or math.isnan(lr):
        raise ValueError(f"lr={lr} must be a learning rate in (0, 1]; try 0.003")
    if max_seconds is not None and not max_seconds > 0:
        raise ValueError(f"max_seconds={max_seconds} must be positive (or None for no limit)")


# --------------------------------------------------------------------------------------------
# One thread while training


_threads_lock = threading.Lock()
_runs_on_one_thread = 0  # one_thread blocks open now, in any thread
_threads_before_runs = 1  # the count to put back when the last of them closes


@contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one intra-op thread for the duration of a training run.

    Why: these models are tiny, so a second thread buys nothing, and when other processes compete
    for the cores the threads wait on each other. The summation order, hence the last bits of every
    loss, also depends on the thread count. One thread makes a seed's run steady and repeatable.

    ``torch.set_num_threads`` sets the calling thread's count and also the count that threads
    started later begin with. So when runs overlap in different threads, the count to put back is
    the one from before the first of them, put back when the last one ends; a run that ends
    earlier puts back only its own thread's count. (The app runs torch on one thread anyway.)
    """
    global _runs_on_one_thread, _threads_before_runs
    own = torch.get_num_threads()
    with _threads_lock:
        if _runs_on_one_thread == 0:
            _threads_before_runs = own
        _runs_on_one_thread += 1
        torch.set_num_threads(1)
    try:
        yield
    finally:
        with _threads_lock:
            _runs_on_one_thread -= 1
            torch.set_num_threads(own if _runs_on_one_thread else _threads_before_runs)


# --------------------------------------------------------------------------------------------
# The reversal task


@dataclass(frozen=True)
class ReversalSettings:
    """Everything that decides a reversal run. Frozen and validated, so it can key a cache.

    M is the length of ``[x, reverse(x)]`` (so x has M // 2 tokens); vocab_size counts the random
    symbols. The model's vocabulary has one more token, BOS, that starts every sequence so that
    position 0 is predicted from something (and that something carries no information).
    """

    M: int = 16
    vocab_size: int = 16
    E: int = 64
    nhead: int = 4
    layers: int = 2
    d_ff: int = 128
    N: int = 64
    steps: int = 300
    lr: float = 3e-3
    causal: bool = True
    seed: int = 0
    eval_sequences: int = 512

    def __post_init__(self) -> None:
        _check("M", self.M, 2, 128)
        if self.M % 2:
            raise ValueError(f"M={self.M} must be even: the sequence is x then x reversed; try {self.M + 1}")
        _check("vocab_size", self.vocab_size, 2, 1000)
        _check_model(self.E, self.nhead, self.layers, self.d_ff)
        _check_run(self.N, self.steps, self.lr, None, self.seed)
        _check("eval_sequences", self.eval_sequences, 1, 10_000)

    @property
    def bos(self) -> int:
        """The start token's id: one past the random symbols 0..vocab_size-1."""
        return self.vocab_size

    @property
    def chance(self) -> float:
        """Accuracy of a blind guess at one uniformly random symbol."""
        return 1.0 / self.vocab_size


def reversal_batch(settings: ReversalSettings, n: int, gen: torch.Generator) -> Tensor:
    """n sequences ``[BOS, x, reverse(x)]``, x uniform over the vocab_size symbols: (n, M + 1)."""
    half = settings.M // 2
    x = torch.randint(0, settings.vocab_size, (n, half), generator=gen)  # (n, M/2)
    bos = torch.full((n, 1), settings.bos, dtype=torch.long)  # (n, 1)
    return torch.cat([bos, x, x.flip(1)], dim=1)  # (n, M + 1)


def _next_token_loss(model: CausalLM, seqs: Tensor, causal: bool) -> Tensor:
    """Mean cross-entropy of predicting seqs[:, t + 1] from seqs[:, :t + 1], every t at once."""
    inputs, targets = seqs[:, :-1], seqs[:, 1:]  # (N, M) each: targets are inputs shifted left
    logits = model(inputs, causal=causal)  # (N, M, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))  # (N*M, V) -> ()


@dataclass
class ReversalResult:
    """A finished (or stopped) reversal run, as plain values.

    ``per_position_accuracy[p]`` is how often the model's top guess for the token at position p
    of ``[x, reverse(x)]``, made from the tokens before p (BOS and positions < p), was right, over
    ``settings.eval_sequences`` fresh sequences it never trained on.
    """

    settings: dict
    per_position_accuracy: list[float]
    first_half: float
    second_half: float
    chance: float
    loss: list[float]
    steps_done: int
    stopped: str | None  # None when every planned step ran; else why it stopped early
    seconds: float
    examples: list[dict] = field(default_factory=list)
    # attention[i][q][k]: block i's attention from query position q (the guess for token q) to
    # input position k (0 is BOS, k >= 1 holds token k - 1), averaged over heads and 64 sequences.
    attention: list[list[list[float]]] = field(default_factory=list)
    # The trained model itself, only when asked for (``keep_model``): not a plain value, so not in to_dict.
    trained: TrainedModel | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        out = asdict(replace(self, trained=None))  # asdict would deep-copy the model's tensors
        del out["trained"]
        return out


def _mean_attention(model: CausalLM, inputs: Tensor, causal: bool, layers: int) -> list[list[list[float]]]:
    """Where each position looks, per block: the evidence of what the model learned to read.

    With the mask, the mirror half looks back at the token it copies (an anti-diagonal). Without
    it, positions look ahead: at the next input, which is the very token they must predict, or at
    that token's copy in the mirror half.
    """
    rec: dict[str, Tensor] = {}
    with torch.no_grad():
        model(inputs, causal=causal, rec=rec)
    return [rec[f"block.{i}.self_attn.weights"].mean(dim=(0, 1)).tolist()  # (n, nhead, M, M) -> (M, M)
            for i in range(layers)]


def _train_loop(model: CausalLM, next_batch: Callable[[], Tensor], *, causal: bool, steps: int, lr: float,
                on_progress: ProgressCallback | None, stop: threading.Event | None,
                max_seconds: float | None) -> tuple[list[float], str | None, float]:
    """Adam on next-token cross-entropy; returns (loss per step, why it stopped early, seconds)."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses: list[float] = []
    stopped = None
    start = time.perf_counter()
    try:
        for step in range(1, steps + 1):
            if stop is not None and stop.is_set():
                stopped = "stop requested"
                break
            loss = _next_token_loss(model, next_batch(), causal)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            elapsed = time.perf_counter() - start
            if on_progress is not None and on_progress(Progress(step, steps, losses[-1], elapsed)) is False:
                stopped = "stop requested"
                break
            if max_seconds is not None and elapsed > max_seconds and step < steps:
                stopped = f"time limit ({max_seconds:g} s)"
                break
    finally:
        opt.state.clear()  # Adam keeps two tensors per parameter; drop them with the run
    return losses, stopped, time.perf_counter() - start


def train_reversal(settings: ReversalSettings | None = None, *, on_progress: ProgressCallback | None = None,
                   stop: threading.Event | None = None, max_seconds: float | None = None,
                   n_examples: int = 4, keep_model: bool = False) -> ReversalResult:
    """Train a fresh CausalLM on the reversal task and measure per-position accuracy.

    Deterministic for ``settings.seed``: weights come from ``build_causal_lm(seed)``, batches from
    a private generator, so nothing depends on (or disturbs) torch's global random state.
    Stops early when ``on_progress`` returns False, ``stop`` is set or ``max_seconds`` pass; the
    accuracy is then measured on the model as it stands. ``keep_model`` keeps the trained model in the result's
    ``trained`` (as the explorer's decoder-only Transformer), for one session to trace.
    """
    s = settings or ReversalSettings()
    _check_run(s.N, s.steps, s.lr, max_seconds, s.seed)
    with one_thread():
        gen = torch.Generator().manual_seed(s.seed)
        model = build_causal_lm(seed=s.seed, vocab_size=s.vocab_size + 1, E=s.E, nhead=s.nhead,
                                layers=s.layers, d_ff=s.d_ff, max_len=s.M, positional="learned")
        try:
            losses, stopped, seconds = _train_loop(
                model, lambda: reversal_batch(s, s.N, gen), causal=s.causal, steps=s.steps, lr=s.lr,
                on_progress=on_progress, stop=stop, max_seconds=max_seconds)
            # Held-out sequences from their own generator: the same ones for every run of a seed.
            test = reversal_batch(s, s.eval_sequences, torch.Generator().manual_seed(s.seed + 1_000_003))
            with torch.no_grad():
                predicted = model(test[:, :-1], causal=s.causal).argmax(-1)  # (n, M, V) -> (n, M)
            truth = test[:, 1:]  # (n, M): the token at each position of [x, reverse(x)]
            per_position = (predicted == truth).float().mean(0).tolist()  # (n, M) -> M floats
            examples = [{"sequence": truth[i].tolist(), "predicted": predicted[i].tolist()}
                        for i in range(min(n_examples, s.eval_sequences))]
            attention = _mean_attention(model, test[:64, :-1], s.causal, s.layers)
            half = s.M // 2
            second_half = sum(per_position[half:]) / half
            trained = None
            if keep_model:
                steps = f"{len(losses)} step{'' if len(losses) == 1 else 's'}"  # a run stopped at once has one
                words = (f"trained: the reversal task, {steps}, {second_half:.0%} of the mirror half right"
                         + ("" if s.causal else ", without the causal mask"))
                trained = trained_reversal(model, s, words)
        finally:
            del model
    return ReversalResult(
        settings=asdict(s), per_position_accuracy=per_position,
        first_half=sum(per_position[:half]) / half, second_half=second_half,
        chance=s.chance, loss=losses, steps_done=len(losses), stopped=stopped, seconds=seconds,
        examples=examples, attention=attention, trained=trained)


# --------------------------------------------------------------------------------------------
# A trained model, for the explorer to trace


@dataclass(frozen=True)
class TrainedModel:
    """A trained model as the explorer traces it: the run's weights in a decoder-only Transformer, its config, a
    sequence of its task with each id's label, and what its weights are. It holds tensors: keep it for one
    session, never in a cache shared by all."""

    config: TransformerConfig
    model: Transformer
    batch: TokenBatch
    weights: str

    def trace(self, batch: TokenBatch | None = None) -> Trace:
        """One recorded pass of the trained model on its task's sequence (or another ``batch`` of its ids)."""
        batch = batch or self.batch
        cfg = self.config if batch.N == self.config.N else self.config.replace(N=batch.N)
        return trace(cfg, text=batch, model=self.model, weights=self.weights)


def reversal_labels(settings: ReversalSettings) -> tuple[str, ...]:
    """Each id's label: the task's symbols as numbers, and the start token (BOS) last."""
    return (*(str(i) for i in range(settings.vocab_size)), START_TOKEN)


def reversal_sequence(settings: ReversalSettings, x: Sequence[int] | None = None, seed: int = 0) -> TokenBatch:
    """What the model reads for one sequence ``[x, reverse(x)]``: BOS, x, and the mirror half but its last token
    (the token at position p is predicted from the ones before it). ``x`` defaults to a seeded random one."""
    half = settings.M // 2
    if x is None:
        x = torch.randint(0, settings.vocab_size, (half,), generator=torch.Generator().manual_seed(seed)).tolist()
    x = list(x)
    if len(x) != half or not all(0 <= i < settings.vocab_size for i in x):
        raise ValueError(f"x must be {half} symbols, each 0 to {settings.vocab_size - 1}; got {x}")
    ids = [settings.bos, *x, *x[::-1]][:settings.M]  # (M,)
    return TokenBatch(source=(tuple(ids),), target=None, labels=reversal_labels(settings))


def trained_reversal(lm: CausalLM, settings: ReversalSettings, weights: str) -> TrainedModel:
    """A reversal run's CausalLM as the decoder-only Transformer the explorer traces, holding the same weights."""
    s = settings
    cfg = TransformerConfig(arch="decoder-only", N=1, M=s.M, E=s.E, nhead=s.nhead, layers=s.layers, d_ff=s.d_ff,
                            vocab_size=s.vocab_size + 1, positional="learned", max_len=s.M, seed=s.seed)
    return TrainedModel(config=cfg, model=as_transformer(lm, cfg), batch=reversal_sequence(s, seed=s.seed),
                        weights=weights)


def as_transformer(lm: CausalLM, cfg: TransformerConfig) -> Transformer:
    """A CausalLM's weights in the decoder-only Transformer ``cfg`` describes (its sizes, learned positions).

    The two run the same operations: a post-norm, ReLU block under the causal mask with a learned table.
    Two differences are bridged here: CausalLM scales its embedding by sqrt(E) and the decoder-only model
    does not, so the copy holds the scaled rows; and CausalLM's output layer has a bias, so it is kept.
    """
    model = Transformer.from_config(cfg)
    model.generator = torch.nn.Linear(cfg.E, cfg.vocab_size)  # (E, vocab_size) with CausalLM's bias
    state = {"positional.table": lm.positional.table, "generator.weight": lm.generator.weight,
             "generator.bias": lm.generator.bias}
    scale = math.sqrt(cfg.E) if lm.embed.scale else 1.0
    state["src_embed.lookup.weight"] = lm.embed.lookup.weight * scale  # (vocab_size, E)
    state["tgt_embed.lookup.weight"] = state["src_embed.lookup.weight"]  # one table: a single stack reads one sequence
    for i in range(cfg.layers):
        for name, value in lm.blocks[i].state_dict().items():
            state[f"decoder.{i}.{name.replace('norm2.', 'norm3.')}"] = value  # the FFN's norm is norm3 there
    with torch.no_grad():
        model.load_state_dict({k: v.detach().clone() for k, v in state.items()})
    model.requires_grad_(False)
    return model


# --------------------------------------------------------------------------------------------
# Tokenizers


class CharTokenizer:
    """One token per character, as in the learner's notebook; ids in sorted order, so a given
    text always gets the same ids (``list(set(text))`` would not: set order changes per process)."""

    kind = "char"

    def __init__(self, text: str):
        self.vocab: list[str] = sorted(set(self.split(text)))
        self.ids = {piece: i for i, piece in enumerate(self.vocab)}

    @staticmethod
    def split(text: str) -> list[str]:
        return list(text)

    def encode(self, text: str) -> list[int]:
        """Text to ids; a piece the tokenizer never saw raises ValueError naming it."""
        pieces = self.split(text)
        unknown = sorted({p for p in pieces if p not in self.ids})
        if unknown:
            shown = ", ".join(repr(p) for p in unknown[:5])
            noun = "token" if len(unknown) == 1 else "tokens"
            raise ValueError(f"{len(unknown)} {self.kind} {noun} not in the training text's vocabulary: {shown}")
        return [self.ids[p] for p in pieces]

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.vocab[i] for i in ids)

    def __len__(self) -> int:
        return len(self.vocab)


class WordTokenizer(CharTokenizer):
    """Split at word boundaries with ``re.split(r"\\b", text)``, as the curriculum says.

    The pieces alternate between words and the runs of spaces, punctuation and newlines between
    them, so joining them gives the text back exactly. re.split also yields an empty string at
    each end of the text; those carry nothing and are dropped.
    """

    kind = "word"

    @staticmethod
    def split(text: str) -> list[str]:
        return [piece for piece in re.split(r"\b", text) if piece]


TOKENIZERS = {"char": CharTokenizer, "word": WordTokenizer}


def load_text() -> str:
    """The public-domain passages shipped in core/data (see SOURCE.md there); never downloaded."""
    return TEXT_FILE.read_text(encoding="utf-8")


def make_tokenizer(kind: str, text: str) -> CharTokenizer:
    if kind not in TOKENIZERS:
        raise ValueError(f"tokenizer={kind!r} must be one of {sorted(TOKENIZERS)}")
    return TOKENIZERS[kind](text)


def chunk(ids: Sequence[int], M: int) -> list[list[int]]:
    """Cut the token stream into non-overlapping pieces of M + 1 tokens (M inputs, M targets).

    Non-overlapping, as the curriculum asks: a window sliding one token at a time (the notebook's
    way) shows the model every token up to M times in near-identical examples, so it memorises
    the text instead of learning from it. The tail shorter than M + 1 is dropped.
    """
    return [list(ids[i:i + M + 1]) for i in range(0, len(ids) - M, M + 1)]


# --------------------------------------------------------------------------------------------
# The tiny language model


@dataclass(frozen=True)
class LMSettings:
    """Everything that decides a language-model run. M is the context length in tokens."""

    tokenizer: str = "char"
    M: int = 64
    E: int = 32
    nhead: int = 4
    layers: int = 2
    d_ff: int = 64
    N: int = 32
    steps: int = 200
    lr: float = 3e-3
    seed: int = 0
    val_fraction: float = 0.1
    prompt: str = "To be"
    sample_tokens: int = 200
    samples: int = 2
    temperature: float = 0.8

    def __post_init__(self) -> None:
        if self.tokenizer not in TOKENIZERS:
            raise ValueError(f"tokenizer={self.tokenizer!r} must be one of {sorted(TOKENIZERS)}")
        _check("M", self.M, 2, 256)
        _check_model(self.E, self.nhead, self.layers, self.d_ff)
        _check_run(self.N, self.steps, self.lr, None, self.seed)
        if not 0 <= self.val_fraction <= 0.5:
            raise ValueError(f"val_fraction={self.val_fraction} must be between 0 and 0.5")
        if len(self.prompt) > 200:
            raise ValueError(f"prompt is {len(self.prompt)} characters; keep it to 200")
        _check("sample_tokens", self.sample_tokens, 0, 2000)
        _check("samples", self.samples, 0, 10)
        if not 0.05 <= self.temperature <= 5:
            raise ValueError(f"temperature={self.temperature} must be between 0.05 and 5; try 0.8")


@dataclass
class LMResult:
    """A finished (or stopped) language-model run, as plain values."""

    settings: dict
    vocab_size: int
    tokens: int  # length of the whole text in tokens
    train_sequences: int
    val_sequences: int
    loss: list[float]  # training loss per step
    val_loss: list[tuple[int, float]]  # (step, held-out loss), a few times per run
    uniform_loss: float  # ln(vocab_size): the loss of a model that knows nothing
    samples: list[str]
    steps_done: int
    stopped: str | None
    seconds: float
    # The trained CausalLM and its tokenizer, only when asked for (``keep_model``): not plain values.
    trained: tuple[CausalLM, CharTokenizer] | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        out = asdict(replace(self, trained=None))
        del out["trained"]
        return out


def _mean_loss(model: CausalLM, seqs: Tensor) -> float:
    with torch.no_grad():
        return _next_token_loss(model, seqs, causal=True).item()


def generate(model: CausalLM, prompt: list[int], n: int, M: int, temperature: float,
             gen: torch.Generator) -> list[int]:
    """Sample n tokens after the prompt, one at a time, each seeing at most the last M tokens."""
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(n):
            context = torch.tensor([ids[-M:]])  # (1, <=M)
            logits = model(context)[0, -1] / temperature  # (1, L, V) -> (V,)
            ids.append(int(torch.multinomial(logits.softmax(-1), 1, generator=gen)))
    return ids


def train_lm(settings: LMSettings | None = None, *, text: str | None = None,
             on_progress: ProgressCallback | None = None, stop: threading.Event | None = None,
             max_seconds: float | None = None, keep_model: bool = False) -> LMResult:
    """Train a fresh CausalLM on the shipped passages (or ``text``) and sample from it.

    The last ``val_fraction`` of the sequences is held out: its loss, measured a few times during
    the run, shows whether the model learns the language or memorises the training lines.
    ``keep_model`` keeps the trained model and its tokenizer in the result's ``trained`` (core.decode ships one).
    """
    s = settings or LMSettings()
    _check_run(s.N, s.steps, s.lr, max_seconds, s.seed)
    text = load_text() if text is None else text
    tok = make_tokenizer(s.tokenizer, text)
    prompt = tok.encode(s.prompt)  # ValueError naming unknown pieces, before any training
    seqs = chunk(tok.encode(text), s.M)
    n_val = int(len(seqs) * s.val_fraction) if len(seqs) > 1 else 0
    if len(seqs) - n_val < 1:
        raise ValueError(f"the text has {len(tok.encode(text))} {s.tokenizer} tokens, too few for one "
                         f"sequence of M={s.M}; lower M")
    with one_thread():
        gen = torch.Generator().manual_seed(s.seed)
        data = torch.tensor(seqs)  # (sequences, M + 1)
        train, val = data[:len(seqs) - n_val], data[len(seqs) - n_val:]  # (train, M + 1), (val, M + 1)
        model = build_causal_lm(seed=s.seed, vocab_size=len(tok), E=s.E, nhead=s.nhead, layers=s.layers,
                                d_ff=s.d_ff, max_len=s.M, positional="learned")
        val_loss: list[tuple[int, float]] = []
        every = max(1, s.steps // 10)

        def next_batch() -> Tensor:
            return train[torch.randint(0, len(train), (s.N,), generator=gen)]  # (N, M + 1)

        def report(p: Progress) -> bool | None:
            if n_val and (p.step % every == 0 or p.step == p.steps):
                val_loss.append((p.step, _mean_loss(model, val)))
            return None if on_progress is None else on_progress(p)

        try:
            losses, stopped, seconds = _train_loop(model, next_batch, causal=True, steps=s.steps, lr=s.lr,
                                                   on_progress=report, stop=stop, max_seconds=max_seconds)
            if n_val and (not val_loss or val_loss[-1][0] != len(losses)) and losses:
                val_loss.append((len(losses), _mean_loss(model, val)))
            start = prompt or [int(data[0, 0])]  # an empty prompt starts where the text starts
            samples = [tok.decode(generate(model, start, s.sample_tokens, s.M, s.temperature, gen))
                       for _ in range(s.samples)]
            trained = (model.requires_grad_(False), tok) if keep_model else None
        finally:
            # Let go of the model and the data now, even on an error (its traceback keeps this frame's
            # names alive). Set to None, not deleted: next_batch and report still name them.
            model = data = train = val = None  # type: ignore[assignment]
    return LMResult(
        settings=asdict(s), vocab_size=len(tok), tokens=sum(1 for _ in tok.split(text)),
        train_sequences=len(seqs) - n_val, val_sequences=n_val, loss=losses, val_loss=val_loss,
        uniform_loss=math.log(len(tok)), samples=samples, steps_done=len(losses), stopped=stopped,
        seconds=seconds, trained=trained)


# --------------------------------------------------------------------------------------------
# Command line


def build_parser() -> OneLineParser:
    r, lm = ReversalSettings(), LMSettings()
    p = OneLineParser(prog="python -m core.train", description="Train a tiny causal Transformer on the CPU.")
    p.add_argument("--task", choices=["reverse", "lm"], default="reverse",
                   help="reverse: [x, reverse(x)] (the causal-mask check); lm: the shipped passages")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, help=f"training steps (default {r.steps} / {lm.steps})")
    p.add_argument("--N", type=int, help=f"batch size (default {r.N} / {lm.N})")
    p.add_argument("--M", type=int, help=f"sequence length (default {r.M} / {lm.M})")
    p.add_argument("--E", type=int, help=f"embedding size (default {r.E} / {lm.E})")
    p.add_argument("--nhead", type=int, help=f"attention heads; must divide E (default {r.nhead} / {lm.nhead})")
    p.add_argument("--layers", type=int, help=f"blocks (default {r.layers} / {lm.layers})")
    p.add_argument("--d-ff", "--d_ff", dest="d_ff", type=int, help=f"FFN hidden width (default {r.d_ff} / {lm.d_ff})")
    p.add_argument("--lr", type=float, help=f"Adam learning rate (default {r.lr} / {lm.lr})")
    p.add_argument("--vocab-size", "--vocab_size", dest="vocab_size", type=int,
                   help=f"reverse: random symbols (default {r.vocab_size})")
    p.add_argument("--no-mask", action="store_true", help="reverse: train and test without the causal mask")
    p.add_argument("--tokenizer", choices=sorted(TOKENIZERS), help="lm: char or word (default char)")
    p.add_argument("--prompt", help=f"lm: the start of each sample (default {lm.prompt!r})")
    p.add_argument("--json", action="store_true", help="print JSON instead of a summary")
    return p


def _summary_reverse(res: ReversalResult) -> str:
    acc = " ".join(f"{a:.2f}" for a in res.per_position_accuracy)
    mask = "with" if res.settings["causal"] else "WITHOUT"
    return (f"reversal task {mask} the causal mask: {res.steps_done} steps in {res.seconds:.1f} s, "
            f"final loss {res.loss[-1]:.3f}\n"
            f"accuracy per position: {acc}\n"
            f"first half {res.first_half:.3f} (chance {res.chance:.3f}), second half {res.second_half:.3f}")


def _summary_lm(res: LMResult) -> str:
    last_val = f", held-out loss {res.val_loss[-1][1]:.3f}" if res.val_loss else ""
    lines = [f"tiny language model ({res.settings['tokenizer']} tokens, vocab_size={res.vocab_size}, "
             f"{res.train_sequences} training sequences): {res.steps_done} steps in {res.seconds:.1f} s, "
             f"loss {res.loss[-1]:.3f}{last_val} (uniform guess {res.uniform_loss:.3f})"]
    lines += [f"--- sample {i + 1} ---\n{text}" for i, text in enumerate(res.samples)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    common = {k: getattr(args, k) for k in ("seed", "steps", "N", "M", "E", "nhead", "layers", "d_ff", "lr")}
    common = {k: v for k, v in common.items() if v is not None}
    try:
        if args.task == "reverse":
            if args.tokenizer is not None or args.prompt is not None:
                raise ValueError("--tokenizer and --prompt belong to --task lm")
            extra = {} if args.vocab_size is None else {"vocab_size": args.vocab_size}
            res = train_reversal(ReversalSettings(causal=not args.no_mask, **common, **extra))
            out = {"per_position_accuracy": res.per_position_accuracy, "first_half": res.first_half,
                   "second_half": res.second_half, "loss": res.loss, "seconds": res.seconds,
                   "chance": res.chance, "steps_done": res.steps_done, "settings": res.settings}
            text = _summary_reverse(res)
        else:
            if args.vocab_size is not None or args.no_mask:
                raise ValueError("--vocab-size and --no-mask belong to --task reverse "
                                 "(the language model's vocabulary comes from its tokenizer)")
            extra = {k: getattr(args, k) for k in ("tokenizer", "prompt") if getattr(args, k) is not None}
            res = train_lm(LMSettings(**common, **extra))
            out, text = res.to_dict(), _summary_lm(res)
    except ValueError as exc:
        return parser.fail(str(exc))
    print(json.dumps(out) if args.json else text)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
