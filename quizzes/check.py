"""Reading a learner's typed answer and checking it: parsing only, never eval (an arithmetic answer
is read from Python's syntax tree, node by node, over a handful of allowed operations).

Every function here accepts any string and never raises; a string that cannot be read gives
``None`` (and a wrong answer), not an exception.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Mapping
from decimal import Decimal
from functools import lru_cache
from typing import Any

from core import TransformerConfig

from .questions import Context, Question, symbols_of, window_symbols

MAX_INPUT = 200  # characters; anything longer is not a shape or a number anyone types
MAX_DIGITS = 15  # per dimension
_PREFIX = re.compile(r"^torch\.size\s*(?=\()", re.IGNORECASE)
_PAIRS = {"(": ")", "[": "]"}
_SEPARATORS = re.compile(r"(?:\s*[,x×*]\s*|\s+)", re.IGNORECASE)
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d{1,3})?$", re.IGNORECASE)
_THOUSANDS = re.compile(r"(?<=\d)[,_ ](?=\d{3}(?:\D|$))")
# A Chinese or Japanese keyboard types full-width forms: (２, ８) or ４E＾２. Read them as the ASCII they
# stand for, and an ideographic space as a space. Not NFKC, which would also read E² as E2.
_HALF_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: " "}


def _half_width(text: str) -> str:
    return text.translate(_HALF_WIDTH)


def parse_shape(text: Any, symbols: Mapping[str, Any] | None = None) -> tuple[int, ...] | None:
    """'(2, 8, 512)', '2x8x512', '2×8×512', '[2,8,512]', '2 8 512', 'torch.Size([2, 8])' -> a tuple.

    With ``symbols`` (a config's, see Context.symbols), the learner's notation is read too:
    '(N, M, d_k)', 'N, nhead, M, E/nhead', 'NxM' or '(N M_target vocab_size)' give the same tuple
    as the numbers they stand for; d_model, the paper's name, is read as E.

    Commas, where there are any, are the only separators, so each dimension between them may be
    arithmetic, as the explorer's formula column writes it: (N, M, nhead*d_k), and just as well
    (2, 8, 2*8) -> (2, 8, 16). Without commas, numbers alone may be separated by x, ×, * or spaces
    (2*8*512 is three dimensions); so may symbols joined by * alone (N*M is (N, M)); otherwise
    symbols are separated by x, × or spaces, with *, / or // inside a dimension (N x nhead*d_k).

    Returns None for anything else (unknown letters, negative or empty dimensions, overly long input).
    """
    try:
        if not isinstance(text, str) or len(text) > MAX_INPUT:
            return None
        body = _PREFIX.sub("", _half_width(text).strip())
        while body[:1] in _PAIRS:  # peel matching brackets: (..), [..], torch.Size([..])
            if body[-1:] != _PAIRS[body[0]]:
                return None
            body = body[1:-1].strip()
        if body[-1:] in (")", "]"):
            return None
        commas = "," in body
        body = body.rstrip(",").strip()  # a one-dimensional tuple may be written (8,)
        if not body:
            return None
        if commas or (symbols is not None and _LETTER.search(body.replace("×", "")) and not _DIGITS_AND_X.match(body)):
            return _symbolic_shape(body, symbols or {}, commas=commas)
        parts = _SEPARATORS.split(body)
        if not parts or any(not p.isascii() or not p.isdigit() or len(p) > MAX_DIGITS for p in parts):
            return None
        return tuple(int(p) for p in parts)
    except Exception:  # noqa: BLE001 - a parser for untrusted text must not raise
        return None


_LETTER = re.compile(r"[A-Za-z]")
_DIGITS_AND_X = re.compile(r"^\d+(?:\s*[x×]\s*\d+)+$", re.IGNORECASE)  # 2x8x512: numbers, not symbols
# the paper's names; not its h for nhead, as many write H for a hidden size, which is E
ALIASES = {"d_model": "E"}


def _numeric_symbols(symbols: Mapping[str, Any]) -> dict[str, int]:
    numeric = {k: v for k, v in symbols.items() if isinstance(v, int) and not isinstance(v, bool)}
    for alias, name in ALIASES.items():
        if name in numeric:
            numeric.setdefault(alias, numeric[name])
    return numeric


def _symbol_lookup(symbols: Mapping[str, Any]):
    """name -> the symbol's whole-number value, or None. Exact names first; then 'd_K' or
    'm_target' still name a symbol, when only one symbol folds to that case."""
    numeric = _numeric_symbols(symbols)
    folded: dict[str, int | None] = {}
    for name, v in numeric.items():
        folded[name.casefold()] = v if name.casefold() not in folded else None
    return lambda name: numeric[name] if name in numeric else folded.get(name.casefold())


def _symbol_names(symbols: Mapping[str, Any]) -> str:
    """A pattern for the symbols' names, longest first so that M_target is not read as M then _target;
    names are matched whole, so the x in max_len is never taken for a separator."""
    return "|".join(sorted(map(re.escape, _numeric_symbols(symbols)), key=len, reverse=True)) or "(?!)"


def _symbolic_shape(body: str, symbols: Mapping[str, Any], *, commas: bool) -> tuple[int, ...] | None:
    """Dimensions split at commas, or when there are none at x, × or spaces ('NxM', 'N x M', 'N M'),
    or at * when nothing else separates them ('N*M').
    Each is a factor, or two joined by * or by / (exact) or // (floor). A factor is a whole number,
    a symbol, or a number just before a symbol, which multiplies it as in 4E; E4 is not read.
    With no symbols, only numbers are read: (2, 8, 2*8)."""
    lookup = _symbol_lookup(symbols)
    names = _symbol_names(symbols)
    factor_text = rf"[0-9]{{1,15}}(?:{names})?|{names}"
    # Factors joined by * alone, N*M or N*M*E, are dimensions, as 2*8*512 is for numbers; beside
    # commas, x or spaces, * multiplies within one dimension: (N, M, nhead*d_k), N x nhead*d_k.
    stars_only = not commas and re.fullmatch(rf"(?:{factor_text})(?:\s*\*\s*(?:{factor_text}))+", body,
                                             re.IGNORECASE)
    joins = r"//?" if stars_only else r"\*|//?"
    dimension = re.compile(rf"({factor_text})(?:\s*({joins})\s*({factor_text}))?", re.IGNORECASE)
    separator = re.compile(r"\s*,\s*" if commas else r"\s*[x×*]\s*|\s+" if stars_only
                           else r"\s*[x×]\s*|\s+", re.IGNORECASE)

    def factor(token: str) -> int | None:
        digits = re.match("[0-9]*", token).group()
        value = lookup(token[len(digits):]) if len(digits) < len(token) else 1
        return None if value is None else int(digits or 1) * value

    out, at = [], 0
    while True:
        match = dimension.match(body, at)
        if not match:
            return None
        value, op, right = factor(match[1]), match[2], match[3] and factor(match[3])
        if op:
            if value is None or right is None or (op != "*" and right == 0) or (op == "/" and value % right):
                return None
            value = value * right if op == "*" else value // right
        if value is None:
            return None
        out.append(value)
        if match.end() == len(body):
            return tuple(out)
        gap = separator.match(body, match.end())
        if not gap:
            return None
        at = gap.end()


def parse_number(text: Any) -> float | None:
    """'201326592', '201,326,592', '2.01e8', ' 8 ' -> a finite float; None if it is not a number."""
    try:
        if isinstance(text, bool):
            return None
        if isinstance(text, (int, float)):
            return float(text) if math.isfinite(text) else None
        if not isinstance(text, str) or len(text) > MAX_INPUT:
            return None
        body = _THOUSANDS.sub("", _half_width(text).strip())
        if not _NUMBER.match(body):
            return None
        number = float(body)
        return number if math.isfinite(number) else None
    except Exception:  # noqa: BLE001
        return None


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}
# Syntax-tree nodes: the whole model's parameter count written part by part, as params-total's
# formula has it, is about 100; the MAX_INPUT characters allow little more, and floats keep it cheap.
MAX_NODES = 160
MAX_EXPONENT = 64
# A number, scientific ones whole (2e3E is 2000 * E); only a lowercase e starts an exponent, since E is a
# symbol (4E+4E is 4E + 4E).
_COEFFICIENT = r"(?<![\w.])(?>[0-9]+(?:\.[0-9]*)?(?:(?-i:e)[+-]?[0-9]+)?)"
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_TYPOGRAPHIC_OPERATORS = str.maketrans({"·": "*", "⋅": "*", "×": "*", "−": "-"})


def parse_expression(text: Any, symbols: Mapping[str, Any] | None = None) -> float | None:
    """'4*16**2 + 4*16', '4 * E^2 + 4*E', '(12*E + d_ff) / (3*nhead)' -> a finite float, read with the
    config's ``symbols`` (see Context.symbols); None if it is anything else.

    Only numbers, those symbols, + - * / // ** (or ^, as people write powers) and parentheses are
    read, from the syntax tree; nothing is evaluated by Python itself. A number just before a
    symbol multiplies it, as people write 4E^2 + 4E or 4 E^2 + 4 E (read before the tree, as 4*E^2 + 4*E); a
    number in scientific notation such as 2e3 stays one. Powers are capped, and the arithmetic is
    done in floats, so no input can make it slow.
    """
    try:
        if not isinstance(text, str) or len(text) > MAX_INPUT or not text.strip():
            return None
        names = _symbol_names(symbols or {})
        # The explanations print ² and ·, as a phone's keyboard offers: read them as ^2 and *, − as -.
        if re.search(r"[⁰¹²³⁴⁵⁶⁷⁸⁹][0-9]", text):  # E²3 is unclear on paper: refused, not read as E^23
            return None
        text = re.sub(r"[⁰¹²³⁴⁵⁶⁷⁸⁹]+", lambda m: "^" + m[0].translate(_SUPERSCRIPT_DIGITS),
                      _half_width(text).strip())
        text = text.translate(_TYPOGRAPHIC_OPERATORS)
        # 4 E^2 + 4 E, with spaces, as people also write it; 4 * E is left alone.
        text = re.sub(rf"{_COEFFICIENT}(?=\s*(?:{names})(?!\w))", r"\g<0>*", text, flags=re.IGNORECASE)
        # Juxtaposition before "(" multiplies, as on paper (4(E^2 + E)); only for known symbols, so sqrt(d_k)
        # stays a call.
        text = re.sub(rf"(?:{_COEFFICIENT}|(?<![\w.])(?:{names})(?!\w)|\))(?=\s*\()", r"\g<0>*", text,
                      flags=re.IGNORECASE)
        tree = ast.parse(text.replace("^", "**"), mode="eval")
        if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
            return None
        lookup = _symbol_lookup(symbols or {})

        def value(node: ast.AST) -> float:
            if isinstance(node, ast.Constant) and type(node.value) in (int, float):
                return float(node.value)
            if isinstance(node, ast.Name) and lookup(node.id) is not None:
                return float(lookup(node.id))
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
                inner = value(node.operand)
                return -inner if isinstance(node.op, ast.USub) else inner
            if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
                left, right = value(node.left), value(node.right)
                if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
                    raise ValueError("exponent too large")
                return _OPERATORS[type(node.op)](left, right)
            raise ValueError(f"not arithmetic: {type(node).__name__}")

        number = value(tree.body)
        return number if isinstance(number, float) and math.isfinite(number) else None
    except Exception:  # noqa: BLE001 - SyntaxError, ZeroDivisionError, OverflowError, deep nesting: all unreadable
        return None


_MILLIONS = re.compile(r"(?<=[\d.])\s*(?:m|mn|millions?)$", re.IGNORECASE)
COUNT_FROM = 1e5  # in a question asked in millions, a number this large can only be the full count


def parse_millions(text: Any) -> float | None:
    """An answer to a question asked in millions: '201.3', '201.3M', '201.3 million', or the full
    count '201,326,592' (read as 201.326592) -> millions; None if it is not a number."""
    if isinstance(text, str) and len(text) <= MAX_INPUT:
        text = _MILLIONS.sub("", _half_width(text).strip())
    number = parse_number(text)
    if number is not None and abs(number) >= COUNT_FROM:
        number /= 1e6
    return number


_COUNT_SCALES = {"k": 10**3, "thousand": 10**3, "m": 10**6, "mn": 10**6, "million": 10**6, "b": 10**9, "bn": 10**9,
                 "billion": 10**9}
_ROUNDED_COUNT = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)\s*(k|thousand|mn?|million|bn?|billion)s?$", re.IGNORECASE)
_SCIENTIFIC = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)e\+?(\d{1,3})$", re.IGNORECASE)  # 6.9e10: a count to two digits
ROUNDED_WITHIN = 0.01  # a rounded count, like an answer in millions, within 1% (and rounded as its digits say)


def parse_rounded_count(text: Any) -> tuple[float, float] | None:
    """A count written rounded, with a unit, '63.1M', '1.09k', '2 billion', or in scientific notation, '6.9e10'
    -> (the count, half a step of its last digit): 63.1M is (63,100,000, 50,000), 6.9e10 (69,000,000,000,
    500,000,000). A trailing K, M or B after a plain number is a unit here, not the symbol M. None for anything
    else."""
    if not isinstance(text, str) or len(text) > MAX_INPUT:
        return None
    body = _THOUSANDS.sub("", _half_width(text).strip())
    scientific = _SCIENTIFIC.match(body)
    if scientific:
        digits, scale = scientific[1], Decimal(10) ** int(scientific[2])
    else:
        match = _ROUNDED_COUNT.match(body)
        if not match:
            return None
        digits, scale = match[1], Decimal(_COUNT_SCALES[match[2].casefold()])
    decimals = len(digits.partition(".")[2])
    return float(Decimal(digits) * scale), float(scale / 10**decimals / 2)


def choice_index(text: Any, choices: tuple[str, ...]) -> int | None:
    """Which choice a reply names: its full text (any case), or its letter 'A', 'b', ..."""
    try:
        if not isinstance(text, str):
            return None
        reply = _half_width(text).strip().casefold()
        for i, choice in enumerate(choices):
            if reply == choice.casefold():
                return i
        if len(reply) == 1 and "a" <= reply < chr(ord("a") + len(choices)):
            return ord(reply) - ord("a")
        return None
    except Exception:  # noqa: BLE001
        return None


def _plain_number(question: Question, given: Any) -> float | None:
    """A numeric reply written as a plain number ('1,088', '63.1M' for a question in millions, and for a
    count, where it means 63,100,000)."""
    if question.unit == "millions":
        return parse_millions(given)
    rounded = parse_rounded_count(given) if question.unit == "count" else None
    return rounded[0] if rounded else parse_number(given)


def read_numeric(question: Question, given: Any, symbols: Mapping[str, Any] | None = None) -> float | None:
    """A numeric reply as a number: plain (_plain_number), or with ``symbols`` arithmetic
    ('4*E**2 + 4*E'), which in a question asked in millions may give the full count. None if it
    cannot be read."""
    number = _plain_number(question, given)
    if number is None and symbols is not None:
        number = parse_expression(given, symbols)
        if number is not None and question.unit == "millions" and abs(number) >= COUNT_FROM:
            number /= 1e6
    return number


def readable(question: Question, given: Any, symbols: Mapping[str, Any] | None = None) -> bool:
    """Can ``given`` be read as an answer of the question's kind at all? An unreadable reply is not
    marked wrong: the page says how to write it, and keeps the last attempt."""
    if question.kind == "shape":
        return parse_shape(given, symbols) is not None
    if question.kind == "numeric":
        return read_numeric(question, given, symbols) is not None
    return choice_index(given, question.choices) is not None


# Configs where every symbol has its own value, to tell apart symbols equal at the learner's config
# (M_target = M by default); their K/V heads keep the learner's kind (probes_like).
_PROBE_SIZES = (
    {"N": 3, "M": 5, "M_target": 7, "E": 48, "d_ff": 92, "vocab_size": 13, "layers": 6, "max_len": 9,
     "relative_buckets": 12},
    {"N": 5, "M": 11, "M_target": 13, "E": 60, "d_ff": 84, "vocab_size": 17, "layers": 2, "max_len": 23,
     "relative_buckets": 6},
)
# (nhead, nhead_kv) of each probe, by the kind of attention: the groups of the grouped-query probes differ
# (2 and 3 query heads a K/V head), so nhead/2 is not taken for nhead_kv.
PROBE_HEADS = {
    "multi-head": ((4, 4), (3, 3)),
    "grouped-query": ((4, 2), (6, 2)),
    "multi-query": ((4, 1), (3, 1)),
    "one head": ((1, 1), (1, 1)),
}


def attention_kind(symbols: Mapping[str, Any]) -> str:
    """Which K/V heads a config's symbols describe: 'one head', 'multi-head', 'multi-query' or 'grouped-query'."""
    nhead, nhead_kv = symbols.get("nhead"), symbols.get("nhead_kv", symbols.get("nhead"))
    if nhead == 1:
        return "one head"
    return "multi-head" if nhead_kv == nhead else "multi-query" if nhead_kv == 1 else "grouped-query"


def probes_like(symbols: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    """The probes' symbols for a reply read at ``symbols``: configs that keep the features the learner's has, the
    kind of attention (nhead_kv = nhead stays so, GQA stays GQA) and d_ff = 4E when it is that, and differ
    in every size. A formula is right when it gives the right value at the learner's config and at these:
    4*E^2 + 4*E is the attention block of a multi-head model, not of a GQA one. The later parts' symbols
    (n_experts, kv_lora_rank, window, ...) get sizes of their own where the learner's config has them."""
    probes = _probes(attention_kind(symbols))
    if symbols.get("d_ff") == 4 * symbols.get("E", 0):
        probes = tuple({**probe, "d_ff": 4 * probe["E"]} for probe in probes)
    return tuple(_with_parts(probe, sizes, symbols) for probe, sizes in zip(probes, _PART_PROBES))


# The later parts' sizes at each probe. A part the learner's config has at 0 (no shared expert, no compressed
# query, every layer windowed) stays 0 there, as it is a feature, not a size.
_PART_PROBES = (
    {"n_experts": 6, "top_k": 3, "d_ff_expert": 20, "n_shared_experts": 2, "first_dense_layers": 1,
     "kv_lora_rank": 10, "q_lora_rank": 7, "rope_head_dim": 6, "nope_head_dim": 5, "v_head_dim": 9, "window": 3,
     "global_every": 3},
    {"n_experts": 10, "top_k": 4, "d_ff_expert": 28, "n_shared_experts": 3, "first_dense_layers": 1,
     "kv_lora_rank": 14, "q_lora_rank": 11, "rope_head_dim": 4, "nope_head_dim": 7, "v_head_dim": 5, "window": 7,
     "global_every": 2},
)


def _with_parts(probe: dict[str, Any], sizes: dict[str, int], symbols: Mapping[str, Any]) -> dict[str, Any]:
    parts = {name: (value if symbols[name] else 0) for name, value in sizes.items() if name in symbols}
    if "window" in parts:
        parts |= window_symbols(probe["M"], probe["layers"], parts["window"], parts["global_every"])
    return {**probe, **parts} if parts else probe


@lru_cache(maxsize=None)
def _probes(kind: str) -> tuple[dict[str, Any], ...]:
    return tuple(symbols_of(TransformerConfig(**sizes, nhead=nhead, nhead_kv=nhead_kv))
                 for sizes, (nhead, nhead_kv) in zip(_PROBE_SIZES, PROBE_HEADS[kind]))


def same_formula(given: Any, formula: str, symbols: Mapping[str, Any], *, shape: bool = True) -> bool:
    """Does a reply written in symbols stand for ``formula`` (a row's shape, e.g. '(N, M, E)', or a
    number's expression, e.g. 'M_target*(M_target - 1)/2'), and not just for the same value at this
    config? '(N, M_target, E)' has the encoder output's numbers whenever M_target = M, as it is by
    default, but it is the target's shape.

    Both are read at the probes (probes_like), where the sizes differ but the features of the learner's
    config stay: its kind of attention, and d_ff = 4E when it has it (writing 4E for d_ff is then no mistake,
    nor nhead for nhead_kv in a multi-head model). A number the learner wrote (a dimension, or a whole reply)
    is their value at this config, so at a probe it may keep that value instead.
    """
    def read(text: Any, table: Mapping[str, Any]) -> tuple[float, ...] | None:
        if shape:
            return parse_shape(text, table)
        number = parse_expression(text, table)
        return None if number is None else (number,)

    def near(a: float, b: float) -> bool:
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))

    live = read(given, symbols)
    for probe in probes_like(symbols):
        mine, theirs = read(given, probe), read(formula, probe)
        if mine is None or theirs is None or live is None or not len(mine) == len(theirs) == len(live):
            return False
        if any(not near(m, t) and not near(m, v) for m, t, v in zip(mine, theirs, live)):
            return False
    return True


def in_symbols(question: Question, given: Any) -> bool:
    """Is this reply readable only through a config's symbols ('(N, M)', '3*E^2'), not as numbers?"""
    if question.kind == "shape":
        return parse_shape(given) is None
    if question.kind == "numeric":
        return _plain_number(question, given) is None
    return False


def check(question: Question, expected: Any, given: Any, symbols: Mapping[str, Any] | None = None,
          formula: str | None = None) -> bool:
    """Is ``given`` (what the learner typed or picked) the expected answer? ``symbols`` lets a
    shape be written in the config's notation, e.g. '(N, M, d_k)', and a number as arithmetic,
    e.g. '4*E**2 + 4*E'. With the answer's ``formula`` (Question.formula), a reply in symbols must
    also be that formula (same_formula), not another that happens to be equal here."""
    if question.kind == "shape":
        if parse_shape(given, symbols) != tuple(expected):
            return False
        return not (formula and in_symbols(question, given)) or same_formula(given, formula, symbols or {})
    if question.kind == "numeric":
        rounded = parse_rounded_count(given) if question.unit == "count" else None
        if rounded is not None:  # '63.1M': the count rounded to the digits given, and within 1%
            count, half_step = rounded
            off = abs(count - float(expected))
            return off <= half_step * (1 + 1e-12) and off <= ROUNDED_WITHIN * abs(float(expected))
        number = read_numeric(question, given, symbols)
        if number is None:
            return False
        allowed = question.tolerance * abs(float(expected)) if question.tolerance else 1e-9 * max(1.0, abs(expected))
        if not question.tolerance and float(expected).is_integer():
            allowed = min(allowed, 0.5)  # an exact count: at 69 billion, 1e-9 of it let 68,976,648,193 pass
        if abs(number - float(expected)) > allowed:
            return False
        return not (formula and in_symbols(question, given)) or same_formula(given, formula, symbols or {},
                                                                             shape=False)
    index = choice_index(given, question.choices)
    return index is not None and question.choices[index] == expected


def mark(question: Question, ctx: Context, given: Any) -> tuple[bool, Any]:
    """(right, expected): ``given`` checked against the question's expected answer in ``ctx``, in the
    config's symbols and against the answer's formula, as the quiz's Check does and as an imported
    answer is marked again (quizzes.recheck). A reply that names one of the question's ties (another position
    with the same largest weight, say) is right too, and that tie is what it is marked against. Raises what
    computing the expected answer raises."""
    expected = question.expected(ctx)
    symbols, formula = question.reading_symbols(ctx), question.formula(ctx)
    if check(question, expected, given, symbols, formula):
        return True, expected
    for other in question.ties(ctx) if question.ties is not None else ():
        if check(question, other, given, symbols, formula):
            return True, other
    return False, expected


def format_answer(question: Question, expected: Any) -> str:
    """The expected answer as a learner would type it; ``check`` accepts this text."""
    if question.kind == "shape":
        return "(" + ", ".join(str(int(d)) for d in expected) + ")"
    if question.kind == "numeric":
        if float(expected).is_integer():
            return str(int(expected))
        return f"{float(expected):.4g}"
    return str(expected)


def shown_formula(formula: str | None, answer_text: str) -> str | None:
    """The formula to show beside an answer written as ``format_answer`` writes it, or None when there
    is none or it would only repeat the answer ('0' parameters for sinusoids, that is '0')."""
    return formula if formula and formula != answer_text else None


def to_json_value(question: Question, expected: Any) -> Any:
    """The expected answer as a plain JSON value: a list for shapes, a number, or the choice text."""
    if question.kind == "shape":
        return [int(d) for d in expected]
    if question.kind == "numeric":
        return int(expected) if float(expected).is_integer() else float(expected)
    return str(expected)
