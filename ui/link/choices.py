"""A page's own choices in its link, next to the shared config: which names, and how bad values fall back.

A teacher's link reproduces what the page shows, not the sizes alone: a lesson on masking sends a
link that opens on the decoder's masked self-attention. The sidebar (ui.sidebar.config) reads and writes
the URL once per run, before the page draws, so the choices a page keeps in the link are declared here,
where the sidebar can reach them without running the page: the attention page's map, the positional
page's tab and curves, the training lab's task and mask, and the quiz's topic, shuffle, mode and
question. A link typed by hand is untrusted: a value is read as plain text or whole numbers, never
evaluated, and one the page cannot show falls back with a sentence for the link's warning.
"""

from __future__ import annotations

import random
import re
from collections import ChainMap
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Collection, Mapping, MutableMapping, Sequence, TypeVar

from core import TransformerConfig
from core.config import PART_PRESETS, PRESETS, REAL_MODELS
from core.cost import OPTIMIZERS, RECOMPUTE, gpus
from core.views import ALL_KINDS, MAX_ROPE_POSITION, attention_kinds
from quizzes import TOPICS, Question, questions_for
from render.words import counted

MAX_SEED = 1_000_000  # the quiz's shuffle seeds are 0 to this


PAST_ANY_END = 10 ** 18  # what a number too long for Python to read stands for: past every range a link meets


def whole_number(text: Any) -> int | None:
    """The whole number ``text`` writes (spaces around it and a sign allowed, as Python's int reads it), or None.
    Digits past Python's int limit still read, as a number past every range, so the warning says what it is past;
    leading zeros and the underscores Python allows between digits do not count."""
    written = str(text).strip()
    try:
        return int(written)
    except ValueError:
        if not re.fullmatch(r"[+-]?\d+(_\d+)*", written):
            return None
        negative = written.startswith("-")
        digits = _digits(written) or "0"
        number = int(digits) if len(digits) <= 4000 else PAST_ANY_END
        return -number if negative else number


def _digits(written: str) -> str:
    """A number's digits as they count: no sign, no leading zeros, no underscores."""
    return written.lstrip("+-").replace("_", "").lstrip("0")


def number_text(value: int, text: Any) -> str:
    """How a warning quotes a number a link gave: as it reads, or, past 40 digits, by its first digits
    and its length (a warning of 5000 digits would bury the rest)."""
    digits = _digits(str(text).strip()) if abs(value) == PAST_ANY_END else str(abs(value))
    sign = "-" if value < 0 else ""
    if len(digits) <= 40:
        return sign + digits
    return f"{sign}{digits[:6]}… ({len(digits):,} digits)"


def warning_quote(text: Any) -> str:
    """At most 40 characters of a link's text, on one line, as a warning quotes it: a newline in it
    would split the warning's list."""
    return " ".join(str(text)[:40].split())


State = Mapping[str, Any]  # the session's state, with the choices a link gave before this one laid over it
EMPTY: State = MappingProxyType({})


@dataclass(frozen=True)
class Choice:
    """One widget of a page whose value a link carries."""
    name: str
    key: str  # may name a size of the config ("p_dims_{E}": each E keeps its own dimensions)
    options: Callable[[TransformerConfig, State], Sequence]  # what the widget offers, given the page's other choices
    default: Callable[[TransformerConfig, State], Any] = lambda cfg, state: 0
    text: Callable[[Any], str] = str  # how a value is written in the URL
    counts: str = ""  # set for a numbered choice: what the numbers count, for a warning ("layers")
    first: int = 0  # the URL counts a value's place among the options from here: the quiz's q=1 is Q1
    whose: Callable[[TransformerConfig, State], str] = lambda cfg, state: "this config's"  # whose ``counts``
    most: int = 0  # set for a list choice: at most this many options, written as they are (dims=0,1)
    sets: tuple[tuple[str, Any], ...] = ()  # state a link naming this choice sets too, unless it names theirs
    prefix: str = ""  # a number may be written after it, as the page shows it: q=Q3
    kept: bool = False  # kept aside for a widget Streamlit forgets off its page (st.tabs has no persist_state)
    # The models whose page draws the widget (G: a decoder-only model's KV cache); for others the URL leaves the
    # choice out, and a link that gives it is told ``why_not``.
    when: Callable[[TransformerConfig], bool] = lambda cfg: True
    why_not: str = ""
    free: int = 0  # a free text (the decoding page's prompt): any text, at most this many characters in the link
    # Where the value stands among the options at a config (the quiz's question): set, it replaces the range check.
    place: Callable[[TransformerConfig, MutableMapping[str, Any], Sequence], Any] | None = None

    def key_at(self, cfg: TransformerConfig) -> str:
        """The widget's key at this config."""
        return self.key.format(**cfg.to_dict())

    def offers(self, value: Any, options: Sequence) -> bool:
        """Whether the widget can show ``value``: one of its options, or for a list, a few of them."""
        if self.most:
            return isinstance(value, list) and len(value) <= self.most and all(v in options for v in value)
        if self.free:
            return isinstance(value, str)
        return value in options

    def among(self, options: Sequence) -> str:
        """How many options, in words: '4 layers', '1 layer' (the counts that can be one all end in s)."""
        return counted(len(options), self.counts.removesuffix("s"), self.counts)

    def written(self, value: Any, options: Sequence) -> str:
        """``value`` as the URL writes it: by its place for a numbered choice, as text for a named one."""
        if self.most:
            return ",".join(map(str, value))
        if self.free:
            return value[:self.free]
        if self.counts:
            return str(self.first + options.index(value))
        return self.text(value)


def slug(text: Any) -> str:
    """Text as compared, and as a link writes a name: lower case, each run of other characters than
    letters and digits one hyphen ("Decoder masked self_attention" is decoder-masked-self-attention)."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


# Short names for the URL; the widget's own label (in any case, with spaces or hyphens) is read too.
KIND_TEXT = {"encoder self-attention": "encoder-self", "decoder masked self-attention": "decoder-masked",
             "cross-attention": "cross", "causal self-attention": "causal", "self-attention": "self"}
assert set(KIND_TEXT) == set(ALL_KINDS)

# The positional page's tabs, and their names in a link (tab=curves); a RoPE model's page opens on its rotation.
POSITIONAL_TABS = {"M × E table": "table", "Dimensions as curves": "curves", "Sinusoidal vs learned": "compare"}
ROPE_TAB = {"RoPE rotation": "rope"}
RELATIVE_TAB = {"Relative buckets": "relative"}  # T5's: the bucket of every (query, key) pair
TAB_TEXT = {**ROPE_TAB, **RELATIVE_TAB, **POSITIONAL_TABS}


def positional_tabs(cfg: TransformerConfig) -> list[str]:
    """The positional page's tabs at this config: a RoPE model's rotation or a T5 model's buckets first, then the
    added tables'."""
    first = {"rope": ROPE_TAB, "relative": RELATIVE_TAB}.get(cfg.positional, {})
    return [*first, *POSITIONAL_TABS]


MAX_CURVES = 8  # dimensions drawn as curves at once
ALL_CURVE_DIMS = 4096  # up to this E every dimension is offered as a curve; past it, default_dims only


def default_dims(E: int) -> list[int]:
    """A fast pair, a middle pair and a slow pair of dimensions (sine and cosine each)."""
    picks = [0, 1, 2 * (E // 4), 2 * (E // 4) + 1, E - 2, E - 1]
    return sorted({d for d in picks if 0 <= d < E})


def curve_dims(E: int) -> Sequence[int]:
    """The dimensions the positional page offers as curves."""
    return range(E) if E <= ALL_CURVE_DIMS else default_dims(E)


# The lab's tasks (its tabs) and its mask toggle (mask=off); its sizes share the sidebar's names, so stay out.
LAB_TASKS = {"Reversal: does the mask work?": "reversal", "A tiny language model": "language-model"}
MASK_TEXT = {False: "on", True: "off"}

# The explorer's KV cache: generated tokens G, doubling; and the RoPE check's query, key and shift positions.
KV_G_CHOICES = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
ROPE_POSITIONS = range(MAX_ROPE_POSITION + 1)

ALL_TOPICS = "All topics"  # the quiz's first choice of topic
ONE, SET = "One question at a time", "A topic set"  # the quiz's modes
MODE_TEXT = {ONE: "one", SET: "set"}
LINKED = "quiz_linked"  # set when a link named a question: a review that does not hold it ends (pages/quiz.py)
HIDDEN = "quiz_hidden"  # the question in view when a change of family or parts hid it: it comes back with them


def quiz_order(topic: str, seed: int, cfg: TransformerConfig | None = None) -> list[Question]:
    """The questions of a topic (or of all, for ALL_TOPICS) in a shuffle seed's order (0: the bank's); with
    ``cfg``, only those about its model, picked out of the whole shuffle so a seed orders every family's questions
    alike. A link's q= counts in this order, never in a review's list (see LINKED)."""
    questions = questions_for(topic if topic in TOPICS else None)
    if seed:
        random.Random(seed).shuffle(questions)
    return questions if cfg is None else [q for q in questions if q.applies(cfg)]


def _quiz_ids(cfg: TransformerConfig, state: State) -> list[str]:
    # A topic with none of this family's questions keeps its whole list, which the page never numbers (it says
    # the topic has none).
    topic, seed = state.get("quiz_topic", ALL_TOPICS), state.get("quiz_seed", 0)
    return [q.id for q in quiz_order(topic, seed, cfg) or quiz_order(topic, seed)]


def _quiz_place(cfg: TransformerConfig, state: MutableMapping[str, Any], ids: Sequence[str]) -> str:
    """The question one-at-a-time mode stands on at this model, among its questions ``ids``: the one in view while
    it applies; when the sidebar's family or parts hide it, the next one after it in the shuffle that applies, and
    the hidden one again once it applies, so a round trip through another family keeps the learner's place."""
    at, hidden = state.get("quiz_at"), state.get(HIDDEN)
    if hidden in ids:
        state[HIDDEN] = None
        return hidden
    if at in ids:
        return at
    order = [q.id for q in quiz_order(state.get("quiz_topic", ALL_TOPICS), state.get("quiz_seed", 0))]
    if at not in order:  # a first visit, or a topic without it: the list's first
        return ids[0]
    state[HIDDEN] = hidden or at
    i = order.index(at)
    return next((qid for qid in order[i:] + order[:i] if qid in ids), ids[0])


def _whose_questions(cfg: TransformerConfig, state: State) -> str:
    topic = state.get("quiz_topic", ALL_TOPICS)
    return f"{topic}'s" if topic in TOPICS else "the quiz's"


def _decoder_only(cfg: TransformerConfig) -> bool:
    return cfg.arch == "decoder-only"


def _rope(cfg: TransformerConfig) -> bool:
    return cfg.positional == "rope"


# G=256: a lesson on the KV cache opens on the length it talks about.
EXPLORER_CHOICES = (
    Choice("G", "x_kv_G", lambda cfg, state: KV_G_CHOICES, lambda cfg, state: 8, when=_decoder_only,
           why_not="only a decoder-only model's page has a KV cache"),
)


def _rope_position(name: str, key: str, default: int) -> Choice:
    return Choice(name, key, lambda cfg, state: ROPE_POSITIONS, lambda cfg, state: default, counts="positions",
                  whose=lambda cfg, state: "the RoPE check's", when=_rope,
                  why_not="only a RoPE model's page checks the score at shifted positions")


# The decoding page's knobs: strategy=beam&beams=4&prompt=To+be opens on that run, the same ids every time
# (sampling is seeded). Its model is its own, not the sidebar's, so no choice depends on the config.
DECODING_STRATEGIES = ("greedy", "beam", "sample", "mbr")
DECODING_MODELS = ("char-lm", "untrained", "reversal")
LENGTH_PENALTIES = (-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
EARLY_STOPPING = ("false", "true", "never")
TEMPERATURES = (0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 1.0, 1.2, 1.5, 2.0, 3.0)
TOP_PS = (0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0)
MAX_DECODING_G = 48
MAX_LINK_PROMPT = 500


def _number(value: float) -> str:
    return f"{value:g}"  # 0.5, 1, 1.5: as a learner types them


def _fixed(options: Sequence, default: Any) -> tuple[Callable, Callable]:
    return (lambda cfg, state: options), (lambda cfg, state: default)


DECODING_CHOICES = (
    Choice("strategy", "d_strategy", *_fixed(DECODING_STRATEGIES, "beam")),
    Choice("model", "d_model", *_fixed(DECODING_MODELS, "char-lm")),
    Choice("prompt", "d_prompt", *_fixed((), "To be, or not to be"), free=MAX_LINK_PROMPT),
    Choice("G", "d_G", *_fixed(range(1, MAX_DECODING_G + 1), 24), counts="new tokens", first=1,
           whose=lambda cfg, state: "the page's"),
    Choice("beams", "d_beams", *_fixed(range(1, 9), 4), counts="beam counts", first=1,
           whose=lambda cfg, state: "the page's"),
    Choice("lp", "d_lp", *_fixed(LENGTH_PENALTIES, 1.0), _number),
    Choice("early", "d_early", *_fixed(EARLY_STOPPING, "false")),
    Choice("T", "d_T", *_fixed(TEMPERATURES, 1.0), _number),
    Choice("k", "d_k", *_fixed(range(0, 101), 0), counts="top-k values (0 is off)", whose=lambda cfg, state: "the"),
    Choice("p", "d_p", *_fixed(TOP_PS, 1.0), _number),
    Choice("S", "d_S", *_fixed(range(2, 17), 8), counts="sample counts", first=2, whose=lambda cfg, state: "the"),
    Choice("seed", "d_seed", *_fixed(range(0, MAX_SEED + 1), 0), counts="seeds", whose=lambda cfg, state: "the"),
)


# The Cost page's hardware and training set-up (gpu=nvidia-a100-sxm-80gb&context=32768&recompute=selective): a
# lesson on the KV cache at long context, or on fine-tuning with ZeRO, opens on the set-up it talks about.
GPU_NAMES = [g.name for g in gpus()]
MFU_CHOICES = [0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8]
CONTEXT_CHOICES = [2 ** k for k in range(21)]  # 1 to 1,048,576 tokens
BATCH_CHOICES = [2 ** k for k in range(11)]  # 1 to 1,024 sequences
DP_CHOICES = [2 ** k for k in range(13)]  # 1 to 4,096 GPUs
OPTIMAL = "optimal"  # D = 20 · active parameters (Chinchilla)
TOKEN_TEXT = {OPTIMAL: "optimal", 1e9: "1B", 1e10: "10B", 1e11: "100B", 3e11: "300B", 1e12: "1T", 1.4e12: "1.4T",
              2e12: "2T", 1.5e13: "15T"}
FLASH_TEXT = {False: "off", True: "on"}


def _with(options: list[int], value: int) -> list[int]:
    return sorted({*options, value})


def cost_choices() -> tuple[Choice, ...]:
    """The Cost page's choices: each a widget's key (c_...) and its name in the link."""
    return (
        Choice("gpu", "c_gpu", lambda cfg, state: GPU_NAMES, lambda cfg, state: GPU_NAMES[0], slug),
        Choice("mfu", "c_mfu", lambda cfg, state: MFU_CHOICES, lambda cfg, state: 0.4, lambda v: f"{v:g}"),
        Choice("context", "c_context", lambda cfg, state: _with(CONTEXT_CHOICES, cfg.M), lambda cfg, state: cfg.M),
        Choice("batch", "c_batch", lambda cfg, state: _with(BATCH_CHOICES, cfg.N), lambda cfg, state: cfg.N),
        Choice("tokens", "c_tokens", lambda cfg, state: list(TOKEN_TEXT), lambda cfg, state: OPTIMAL,
               TOKEN_TEXT.__getitem__),
        Choice("optimizer", "c_optimizer", lambda cfg, state: list(OPTIMIZERS),
               lambda cfg, state: next(iter(OPTIMIZERS)), slug),
        Choice("zero", "c_zero", lambda cfg, state: [0, 1, 2, 3], lambda cfg, state: 0),
        Choice("dp", "c_dp", lambda cfg, state: DP_CHOICES, lambda cfg, state: 1),
        Choice("recompute", "c_recompute", lambda cfg, state: list(RECOMPUTE), lambda cfg, state: RECOMPUTE[0]),
        Choice("flash", "c_flash", lambda cfg, state: [False, True], lambda cfg, state: False, FLASH_TEXT.__getitem__),
    )


# The Compare page's two sides (a=Llama-2-70B&b=Mixtral-8x7B): the sidebar's model or any preset, by its
# short name (the part before " (", as core.compare.find_preset reads it too).
SIDEBAR_MODEL = "sidebar"
COMPARED = list(dict.fromkeys([SIDEBAR_MODEL, *PRESETS, *REAL_MODELS, *PART_PRESETS]))


def short_name(name: str) -> str:
    """A preset's name without its parenthesis ("Tiny MoE (8 experts, top 2)" is "Tiny MoE")."""
    return name.split(" (")[0]


COMPARE_CHOICES = (
    Choice("a", "cmp_a", lambda cfg, state: COMPARED, lambda cfg, state: SIDEBAR_MODEL, short_name),
    Choice("b", "cmp_b", lambda cfg, state: COMPARED, lambda cfg, state: "Mixtral-8x7B", short_name),
)


PAGE_CHOICES: dict[str, tuple[Choice, ...]] = {
    "decoding": DECODING_CHOICES,
    "": EXPLORER_CHOICES,  # the default page's url_path
    "explorer": EXPLORER_CHOICES,
    "attention": (
        Choice("kind", "a_kind", lambda cfg, state: list(attention_kinds(cfg)),
               lambda cfg, state: next(iter(attention_kinds(cfg))), KIND_TEXT.__getitem__),
        Choice("layer", "a_layer", lambda cfg, state: range(cfg.layers), counts="layers"),
        Choice("head", "a_head", lambda cfg, state: range(cfg.nhead), counts="heads"),
        # The last sequence is the padded one, so its mask shows something.
        Choice("item", "a_item", lambda cfg, state: range(cfg.N), lambda cfg, state: cfg.N - 1,
               counts="batch items"),
    ),
    # tab=curves&dims=0,1,30,31: a lesson on frequencies opens on the curves it talks about.
    "positional": (
        Choice("tab", "p_tab", lambda cfg, state: positional_tabs(cfg), lambda cfg, state: positional_tabs(cfg)[0],
               TAB_TEXT.__getitem__, kept=True),
        Choice("dims", "p_dims_{E}", lambda cfg, state: curve_dims(cfg.E), lambda cfg, state: default_dims(cfg.E),
               counts="dimensions", whose=lambda cfg, state: "the page's", most=MAX_CURVES),
        # i=5&j=2&s=1000: the RoPE check at the positions a lesson names.
        _rope_position("i", "p_rope_i", 5),
        _rope_position("j", "p_rope_j", 2),
        _rope_position("s", "p_rope_s", 10),
    ),
    # task=reversal&mask=off: a lesson on the mask opens the lab on the run without it. A link never
    # starts a run: only the Train button does.
    "training_lab": (
        Choice("task", "tl_task", lambda cfg, state: list(LAB_TASKS), lambda cfg, state: next(iter(LAB_TASKS)),
               LAB_TASKS.__getitem__, kept=True),
        Choice("mask", "tl_rev_nomask", lambda cfg, state: [False, True], lambda cfg, state: False,
               MASK_TEXT.__getitem__),
    ),
    # topic=masking: a lesson's link opens the quiz on its own topic's questions; q=3 on its third, as
    # the quiz numbers them in that topic and shuffle (seed), one at a time unless the link says mode=set.
    "quiz": (
        Choice("topic", "quiz_topic", lambda cfg, state: [ALL_TOPICS, *TOPICS], lambda cfg, state: ALL_TOPICS,
               slug),
        Choice("seed", "quiz_seed", lambda cfg, state: range(MAX_SEED + 1), counts="shuffle seeds",
               whose=lambda cfg, state: "the"),
        Choice("mode", "quiz_mode", lambda cfg, state: list(MODE_TEXT), lambda cfg, state: ONE,
               MODE_TEXT.__getitem__),
        Choice("q", "quiz_at", _quiz_ids, lambda cfg, state: _quiz_ids(cfg, state)[0], counts="questions", first=1,
               whose=_whose_questions, prefix="Q", sets=(("quiz_mode", ONE), (LINKED, True), (HIDDEN, None)),
               place=_quiz_place),
    ),
    "cost": cost_choices(),
    "compare": COMPARE_CHOICES,
}


V = TypeVar("V")


def names_any_case(query: Mapping[str, V], exact: Collection[str]) -> dict[str, tuple[str, V]]:
    """A link's names as the app reads them: each name in lower case, without spaces around it, -> the name as the
    link spelt it (for a warning to quote) and its value. A name spelt twice in different cases (``E=32&e=64``)
    takes the spelling in ``exact``, wherever it stands."""
    found: dict[str, tuple[str, V]] = {}
    for name, value in sorted(query.items(), key=lambda item: item[0] not in exact):  # exact names first
        found.setdefault(name.strip().lower(), (name, value))
    return found


def read_choice(choice: Choice, raw: Any, cfg: TransformerConfig, state: State = EMPTY) -> tuple[Any, str | None]:
    """The value a link's ``raw`` text asks for, or the nearest one the widget offers (a number past
    the end becomes the last) or its default, with a sentence saying so. Never raises."""
    if choice.most:
        return _read_list(choice, raw, cfg, state)
    if choice.free:  # any text, cut to its length: it is shown as text, never run
        text = str(raw)
        if len(text) <= choice.free:
            return text, None
        return text[:choice.free], (f"{choice.name}={warning_quote(text)!r}… is {len(text):,} characters long; "
                                    f"the link keeps its first {choice.free:,}.")
    options = choice.options(cfg, state)
    default = choice.default(cfg, state)
    shown = warning_quote(raw)
    if choice.counts:
        written = str(raw).strip().removeprefix(choice.prefix).removeprefix(choice.prefix.lower())
        number = whole_number(written)
        if number is None:
            showing = f"showing {choice.name} {choice.written(default, options)}."
            if isinstance(options, range):
                return default, f"{choice.name}={shown!r} is not a whole number written in digits; {showing}"
            for option in options:  # named options, numbered in the URL: q=mask-probe, a question's id
                if slug(raw) == slug(option):
                    return option, None
            return default, (f"{choice.name}={shown!r} is neither a whole number written in digits nor the id of one "
                             f"of {choice.whose(cfg, state)} {choice.among(options)}; {showing}")
        first, last = choice.first, choice.first + len(options) - 1
        if first <= number <= last:
            return options[number - first], None
        near = min(max(number, first), last)
        shown = number_text(number, written)
        span = f"{first}" if first == last else f"{first} to {last:,}"
        return options[near - first], (
            f"{choice.name}={shown} is not among {choice.whose(cfg, state)} {choice.among(options)}, "
            f"{span}; showing {choice.name} {near}.")
    wanted = slug(raw)
    for option in options:  # the URL's name, or the widget's own label (not a bool's: mask=true is no "off")
        if wanted == slug(choice.text(option)) or (isinstance(option, str) and wanted == slug(option)):
            return option, None
    names = ", ".join(choice.text(option) for option in options)
    return default, f"{choice.name}={shown!r} is not one of {names}; showing {choice.text(default)}."


def _read_list(choice: Choice, raw: Any, cfg: TransformerConfig, state: State) -> tuple[list, str | None]:
    """A list choice's values (dims=0,1,30,31, or with spaces): each a whole number the widget offers,
    once, at most ``most`` of them. What cannot be read is left out with a sentence; if nothing is left,
    the default. A repeat (dims=1,1,2) is dropped without one: it asks for nothing the list does not
    show already."""
    options = choice.options(cfg, state)
    picked: list[int] = []
    left_out = False
    for part in re.split(r"[\s,;]+", str(raw).strip()):
        number = whole_number(part)
        if number is None:
            left_out = left_out or bool(part)
            continue
        if number not in options:
            left_out = True
        elif number not in picked:
            picked.append(number)
    if len(picked) > choice.most:
        picked, left_out = picked[:choice.most], True
    if not left_out:
        return picked, None
    value = picked or choice.default(cfg, state)
    span = f"{options[0]} to {options[-1]}" if isinstance(options, range) and len(options) > 1 else \
        ", ".join(map(str, options))
    return value, (f"{choice.name}={warning_quote(raw)!r} is not a list of at most {choice.most} of "
                   f"{choice.whose(cfg, state)} {choice.among(options)} ({span}), in digits; showing "
                   f"{choice.name} {choice.written(value, options)}.")


def read_choices(choices: Sequence[Choice], query: dict[str, Any], cfg: TransformerConfig,
                 state: State = EMPTY) -> tuple[dict[str, Any], list[str]]:
    """Widget key -> value for each choice the query names (exactly, or in another case), and the
    warnings for those that had to fall back. Choices the query leaves out keep what they have in
    ``state``; a choice read is seen by those after it (the quiz's q counts in the link's topic)."""
    names = names_any_case(query, [choice.name for choice in choices])
    values: dict[str, Any] = {}
    warnings: list[str] = []
    for choice in choices:
        _, raw = names.get(choice.name.lower(), (None, None))
        if raw is None:
            continue
        if not choice.when(cfg):
            warnings.append(f"{choice.name}={warning_quote(raw)!r} was left out: {choice.why_not}.")
            continue
        values[choice.key_at(cfg)], warning = read_choice(choice, raw, cfg, ChainMap(values, state))
        if warning:
            warnings.append(warning)
    for choice in choices:
        if choice.name.lower() in names and choice.when(cfg):
            for key, value in choice.sets:
                values.setdefault(key, value)  # unless the link names that choice too
    return values, warnings


KEPT = "kept_"  # a kept choice's last value, under a key that is no widget's


def keep_choices_in_range(choices: Sequence[Choice], cfg: TransformerConfig, state: MutableMapping[str, Any]) -> None:
    """Give each choice a value the widget offers at ``cfg``: its default on a first visit, and after the config
    shrank under it or the quiz's topic changed under its question. A ``kept`` choice comes back as it was left on
    its page: Streamlit forgets a widget a run does not draw, and tabs have no persist_state."""
    for choice in choices:
        if not choice.when(cfg):
            continue  # no widget of it on this model's page: what it holds waits for a model that has one
        key = choice.key_at(cfg)
        options = choice.options(cfg, state)
        if choice.kept and key not in state and choice.offers(state.get(KEPT + key), options):
            state[key] = state[KEPT + key]
        if choice.place is not None:
            state[key] = choice.place(cfg, state, options)
        elif key not in state or not choice.offers(state[key], options):
            state[key] = choice.default(cfg, state)
        if choice.kept:
            state[KEPT + key] = state[key]


def link_values(choices: Sequence[Choice], cfg: TransformerConfig, state: MutableMapping[str, Any]) -> dict[str, str]:
    """The choices as the URL writes them, after ``keep_choices_in_range``."""
    return {choice.name: choice.written(state[choice.key_at(cfg)], choice.options(cfg, state)) for choice in choices
            if choice.when(cfg)}
