"""Small, bounded views of a trace for the pages to draw: plain lists and numbers, never tensors.

The pages may not do tensor maths (they only render), so every slice, mask broadcast or table
they draw is cut here. Each view is capped (``MAX_POSITIONS`` positions, ``MAX_DIMS`` embedding
dimensions), so a huge M or E costs the page no more than a small one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from .cache_kinds import KVCacheView, kv_cache_view, kv_kinds  # noqa: F401  (the pages' and tests' names)
from .config import TransformerConfig, longest_sequence
from .memory import FP16_BYTES, every_layer, kv_cache_bytes
from .model import PositionalEncoding, sinusoidal_table, sliding_window_mask
from .positions import apply_rope, relative_position_bucket, rope_angles
from .rows import EXTRAS, ROWS, extras_for, rows_for
from .slim import slim_attention
from .trace import Trace
from .weights import seeded

MAX_POSITIONS = 64  # rows and columns drawn in a heatmap
MAX_DIMS = 64  # embedding dimensions drawn in a heatmap
MAX_CURVE_POSITIONS = 512  # positions drawn along a positional-encoding curve

# Attention kind shown to the learner -> (stack, block) in the recorder's hook names.
ATTENTION_KINDS: dict[str, tuple[str, str]] = {
    "encoder self-attention": ("enc", "self_attn"),
    "decoder masked self-attention": ("dec", "self_attn"),
    "cross-attention": ("dec", "cross_attn"),
}

# A single stack has one attention, named for what it does: GPT's is causal, BERT's sees every key.
ONE_STACK_KINDS: dict[str, dict[str, tuple[str, str]]] = {
    "decoder-only": {"causal self-attention": ("dec", "self_attn")},
    "encoder-only": {"self-attention": ("enc", "self_attn")},
}
ALL_KINDS: dict[str, tuple[str, str]] = {**ATTENTION_KINDS, **ONE_STACK_KINDS["decoder-only"],
                                         **ONE_STACK_KINDS["encoder-only"]}
CAUSAL_KINDS = ("decoder masked self-attention", "causal self-attention")  # blocked above the diagonal


def attention_kinds(cfg: TransformerConfig) -> dict[str, tuple[str, str]]:
    """The attentions this config's model has, as the learner names them -> (stack, block)."""
    return ONE_STACK_KINDS.get(cfg.arch, ATTENTION_KINDS)


def weights_row(kind: str, cfg: TransformerConfig | None = None) -> str:
    """The key of the trace's row or extra (core.rows) that holds layer 0's weights of one kind: a
    shape-only trace has no values to cut a map from, but it still has their shape and bytes.
    With ``cfg``, among that config's own rows (a single stack names its rows its own way)."""
    stack, block = ALL_KINDS[kind]
    specs = ROWS + EXTRAS if cfg is None else rows_for(cfg) + extras_for(cfg)
    return next(r.key for r in specs if r.hook == f"{stack}.0.{block}.weights")


@dataclass(frozen=True)
class AttentionMap:
    """One head's attention for one sequence, cut to at most MAX_POSITIONS queries and keys.

    ``weights[i][j]`` is how much query i takes from key j (each full row sums to 1);
    ``blocked[i][j]`` is True where a mask stopped query i from seeing key j.
    """

    kind: str
    layer: int
    head: int
    item: int
    queries: int  # full number of query positions
    keys: int  # full number of key positions
    weights: list[list[float]]
    blocked: list[list[bool]]
    query_tokens: list[int]
    key_tokens: list[int]
    hidden_beyond: int = 0  # keys the mask hides that lie past the drawn ones (a capped map's padding)

    @property
    def capped(self) -> bool:
        return len(self.weights) < self.queries or (bool(self.weights) and len(self.weights[0]) < self.keys)

    @property
    def blocked_weight_max(self) -> float | None:
        """The largest weight on a blocked cell (0.0 when masking works), None if nothing is blocked."""
        values = [w for wrow, brow in zip(self.weights, self.blocked) for w, b in zip(wrow, brow) if b]
        return max(values) if values else None


def attention_map(t: Trace, kind: str, layer: int = 0, head: int = 0, item: int = 0,
                  cap: int = MAX_POSITIONS) -> AttentionMap:
    """Weights and mask of one head, for sequence ``item``; ValueError on a shape-only trace."""
    if t.shape_only:
        raise ValueError("this trace is shape-only (no values were computed), so there are no weights to draw")
    _check_map(t.config, kind, layer, head, item)
    return _cut_map(t.tensors, kind, layer, head, item, item, cap, layer_window(t.config, layer))


def layer_window(cfg: TransformerConfig, layer: int) -> int:
    """The window layer ``layer`` attends through, 0 when it attends in full (no window, or a global layer)."""
    return cfg.window if cfg.windowed(layer) else 0


def slim_attention_maps(cfg: TransformerConfig, kind: str, layer: int = 0, item: int = 0,
                        cap: int = MAX_POSITIONS) -> tuple[AttentionMap, ...]:
    """Every head's map for one layer, kind and sequence, from a slim pass (core.slim): what
    ``attention_map`` cuts from a whole trace, for a config too big to trace whole."""
    _check_map(cfg, kind, layer, 0, item)
    stack, block = ALL_KINDS[kind]
    tensors = slim_attention(cfg, stack, block, layer, item)  # batch item ``item`` alone, as row 0
    window = layer_window(cfg, layer)
    return tuple(_cut_map(tensors, kind, layer, head, item, 0, cap, window) for head in range(cfg.nhead))


def _check_map(cfg: TransformerConfig, kind: str, layer: int, head: int, item: int) -> None:
    kinds = attention_kinds(cfg)
    if kind not in kinds:
        raise ValueError(f"kind={kind!r} must be one of {', '.join(kinds)}: the attentions of a {cfg.arch} model")
    for name, value, limit in (("layer", layer, cfg.layers), ("head", head, cfg.nhead), ("item", item, cfg.N)):
        if not 0 <= value < limit:
            raise ValueError(f"{name}={value} is out of range: this config has {limit} (0 to {limit - 1})")


def _cut_map(tensors: dict[str, Tensor], kind: str, layer: int, head: int, item: int, row: int,
             cap: int, window: int = 0) -> AttentionMap:
    """One head's capped map out of recorded tensors whose batch row ``row`` holds sequence ``item``; a
    windowed layer (``window`` > 0) was masked by its band, not the causal mask alone, and shows that band."""
    stack, block = ALL_KINDS[kind]
    weights: Tensor = tensors[f"{stack}.{layer}.{block}.weights"][row, head]  # (L_q, S)
    Lq, S = weights.shape
    q, k = min(Lq, cap), min(S, cap)
    weights = weights[:q, :k]  # (q, k)
    hidden_beyond = 0
    if kind in CAUSAL_KINDS and window:
        blocked = sliding_window_mask(Lq, S, window)[:q, :k]  # (q, k): later keys, and those window or more behind
    elif kind in CAUSAL_KINDS:
        blocked = tensors["tgt_mask"][:q, :k]  # (q, k): True above the diagonal
    else:  # encoder self and cross both hide the source's padding keys
        padding = tensors["src_key_padding_mask"][row]  # (S,)
        blocked = padding[:k].unsqueeze(0).expand(q, k)  # (1, k) -> (q, k): same keys hidden for every query
        hidden_beyond = int(padding[k:].sum())
    query_ids = tensors["src.tokens" if stack == "enc" else "tgt.tokens"][row, :q]  # (q,)
    key_ids = tensors["tgt.tokens" if kind in CAUSAL_KINDS else "src.tokens"][row, :k]  # (k,)
    return AttentionMap(kind=kind, layer=layer, head=head, item=item, queries=Lq, keys=S,
                        weights=weights.float().tolist(), blocked=blocked.tolist(),
                        query_tokens=query_ids.tolist(), key_tokens=key_ids.tolist(), hidden_beyond=hidden_beyond)


@dataclass(frozen=True)
class KVSharing:
    """Which K/V head each query head reads, with the shapes of layer 0's Q, K and V: the same in
    every layer (and in cross-attention), as every attention of the model has the same heads."""

    nhead: int
    nhead_kv: int
    kv_head: list[int]  # kv_head[h]: the K/V head query head h reads
    q_shape: tuple[int, ...]  # (N, nhead, M, d_k)
    k_shape: tuple[int, ...]  # (N, nhead_kv, M, d_k), V the same
    recorded: bool  # kv_head read off the live pass, not worked out from the config

    @property
    def group(self) -> int:
        """Query heads per K/V head: nhead / nhead_kv."""
        return self.nhead // self.nhead_kv

    @property
    def name(self) -> str:
        """Multi-head (one K/V head per query head), multi-query (one for all) or grouped-query attention."""
        return "MHA" if self.nhead_kv == self.nhead else "MQA" if self.nhead_kv == 1 else "GQA"

    def readers(self, g: int) -> list[int]:
        """The query heads that read K/V head g."""
        return [h for h, kv in enumerate(self.kv_head) if kv == g]


def kv_sharing(t: Trace) -> KVSharing:
    """Layer 0's head sharing, from the trace: its recorded ``kv_head`` (query head h -> h // (nhead /
    nhead_kv), as the model's repeat_interleave lays K and V out) when the pass holds values, else the
    same rule on the config (a shape-only pass, or the paper's model, which records none: every head its own)."""
    cfg = t.config
    if cfg.attention == "mla":
        raise ValueError("attention='mla' shares no K/V heads: every head gets its own K and V back from the one "
                         "cached latent; the trace's latent_kv and k_stacked extras show them")
    attn = ("dec" if cfg.arch == "decoder-only" else "enc") + ".0.self_attn."
    recorded = attn + "kv_head" in t.tensors
    group = cfg.nhead // cfg.nhead_kv
    kv_head = t.tensors[attn + "kv_head"].tolist() if recorded else [h // group for h in range(cfg.nhead)]
    return KVSharing(nhead=cfg.nhead, nhead_kv=cfg.nhead_kv, kv_head=kv_head, q_shape=t.shapes[attn + "q"],
                     k_shape=t.shapes[attn + "k"], recorded=recorded)


def _check_rotate_half(cfg: TransformerConfig) -> None:
    """The RoPE views draw d_k's pairs as Llama lays them (i, i + d_k/2); latent attention turns only its
    rope_head_dim part, in neighbouring pairs."""
    if cfg.attention == "mla":
        raise ValueError(f"attention='mla' turns only the rope_head_dim = {cfg.rope_head_dim} part of each query "
                         "and key, in neighbouring pairs: these RoPE views draw multi-head attention's d_k; use "
                         "attention='mha' to see them")


@dataclass(frozen=True)
class RopeView:
    """RoPE's angles cut for drawing: ``angles[p][j]`` is how far position p turns pair ``pairs[j]``, in radians."""

    d_k: int
    positions: int  # positions shown (at most MAX_POSITIONS)
    pairs: list[int]  # pair i turns dimensions i and i + d_k/2 together (rotate_half's layout)
    rates: list[float]  # each shown pair's angle per position: 10000^(-2i/d_k)
    angles: list[list[float]]
    slowest: float  # the last pair's angle per position, shown or not


def rope_view(cfg: TransformerConfig, cap: int = MAX_POSITIONS, pair_cap: int = MAX_DIMS) -> RopeView:
    """The first positions' rotation angles per pair, from the table the model itself uses
    (core.positions.rope_angles). ValueError for an odd d_k, which RoPE cannot split into pairs."""
    _check_rotate_half(cfg)
    if cfg.d_k % 2:
        raise ValueError(f"RoPE turns pairs of dimensions, so it needs an even d_k; d_k = E/nhead = {cfg.d_k} is odd")
    P, half = min(cfg.M, cap), cfg.d_k // 2
    pairs = list(range(0, half, math.ceil(half / pair_cap)))
    table = rope_angles(P, cfg.d_k)[:, :half]  # (P, d_k) -> (P, d_k/2): the second half repeats the first
    rates = rope_angles(1, cfg.d_k, start=1)[0, :half]  # (d_k/2,): position 1's angles are the rates
    return RopeView(d_k=cfg.d_k, positions=P, pairs=pairs, rates=rates[pairs].tolist(),
                    angles=table[:, pairs].tolist(), slowest=float(rates[-1]))


@dataclass(frozen=True)
class RopeScores:
    """One query and one key scored after RoPE turned them, at (i, j) and shifted together to (i + s, j + s)."""

    i: int
    j: int
    s: int
    score: float  # q turned to position i, dotted with k turned to position j
    shifted: float  # the same q and k at i + s and j + s
    unturned: float  # q . k with no rotation: what the offset i - j changes
    allowance: float  # how far float32 rounding of the angles and the sum may move the two apart
    source: str  # where q and k come from, in words

    @property
    def difference(self) -> float:
        return self.shifted - self.score


def rope_score(q: Tensor, k: Tensor, i: int, j: int) -> Tensor:
    """q turned to position i, dotted with k turned to position j, as the model turns them (apply_rope)."""
    d_k = q.shape[-1]
    q_i = apply_rope(q, rope_angles(1, d_k, start=i))  # (1, d_k)
    k_j = apply_rope(k, rope_angles(1, d_k, start=j))  # (1, d_k)
    return (q_i * k_j).sum()  # ()


def rope_allowance(q: Tensor, k: Tensor, i: int, j: int, s: int) -> float:
    """A bound on float32 rounding between the two scores. An angle p * rate is rounded to about
    p * 2^-24 radians, so the bound grows with the positions; the dot product adds a few roundings a dimension."""
    eps = torch.finfo(torch.float32).eps
    # Norms in float64: squaring a tiny float32 entry (1e-25) underflows to 0, and a zero bound allows nothing.
    roundings = 4 * (i + j + 2 * s) + 4 * q.shape[-1] + 16
    # Below float32's normal range a rounding errs by up to one subnormal step (2^-149), not by a share of eps.
    return float(q.double().norm() * k.double().norm()) * eps * roundings + 2.0 ** -149 * roundings


def rope_vectors(cfg: TransformerConfig, t: Trace | None = None) -> tuple[Tensor, Tensor, str]:
    """A query and a key of width d_k: the live model's own (head 0 and K/V head 0 at position 0 of
    the first sequence, where RoPE's angle is 0, so they are as W^Q and W^K made them) when ``t``
    holds values of a RoPE model; else seeded random ones."""
    stack = "dec" if cfg.arch == "decoder-only" else "enc"
    if t is not None and not t.shape_only and cfg.positional == "rope":
        q = t.tensors[f"{stack}.0.self_attn.q"][0, 0, :1]  # (N, nhead, M, d_k) -> (1, d_k)
        k = t.tensors[f"{stack}.0.self_attn.k"][0, 0, :1]  # (N, nhead_kv, M, d_k) -> (1, d_k)
        return q.float(), k.float(), "the live model's query (head 0) and key (K/V head 0) of the first token"
    gen = torch.Generator().manual_seed(cfg.seed)
    q, k = torch.randn(2, 1, cfg.d_k, generator=gen)  # (1, d_k) each
    return q, k, f"a seeded random query and key, d_k = {cfg.d_k} wide"


def rope_relative(cfg: TransformerConfig, i: int, j: int, s: int, t: Trace | None = None) -> RopeScores:
    """RoPE's relative property, measured: the same q and k scored at (i, j) and at (i + s, j + s)."""
    _check_rotate_half(cfg)
    for name, value in (("i", i), ("j", j), ("s", s)):
        if not 0 <= value <= MAX_ROPE_POSITION:
            raise ValueError(f"{name}={value} is out of range: positions here go from 0 to {MAX_ROPE_POSITION:,}")
    if cfg.d_k % 2:
        raise ValueError(f"RoPE turns pairs of dimensions, so it needs an even d_k; d_k = E/nhead = {cfg.d_k} is odd")
    q, k, source = rope_vectors(cfg, t)
    with torch.no_grad():
        score, shifted = rope_score(q, k, i, j), rope_score(q, k, i + s, j + s)
        unturned = (q * k).sum()  # ()
    return RopeScores(i=i, j=j, s=s, score=float(score), shifted=float(shifted), unturned=float(unturned),
                      allowance=rope_allowance(q, k, i, j, s), source=source)


MAX_ROPE_POSITION = 100_000  # positions and shift the RoPE demonstration offers


def pair_step(E: int, cap: int = MAX_DIMS) -> int:
    """Every how many (sine, cosine) pairs a capped heatmap shows one: 1 when all E dimensions fit."""
    return 1 if E <= cap else math.ceil(math.ceil(E / 2) / max(1, cap // 2))


def shown_dims(E: int, cap: int = MAX_DIMS) -> list[int]:
    """Which embedding dimensions a capped heatmap shows: all of them, or whole pairs at a stride.

    Dimensions 2i and 2i+1 are the sine and the cosine of one frequency, so a capped table keeps
    both of every pair it shows. A plain stride of an even number of dimensions would keep only the
    sines, and row 0 (position 0, where every sine is 0) would be all zeros.
    """
    step = pair_step(E, cap)
    return [d for i in range(0, (E + 1) // 2, step) for d in (2 * i, 2 * i + 1) if d < E]


@dataclass(frozen=True)
class PositionalView:
    """A positional table cut for drawing: ``table[p][j]`` is position p, dimension ``dims[j]``."""

    kind: str
    positions: int  # positions shown (at most MAX_POSITIONS)
    dims: list[int]
    table: list[list[float]]
    similarity: list[list[float]]  # cosine similarity between the shown positions' full vectors; NaN: undefined
    note: str
    zero_positions: list[int]  # positions whose whole vector is 0: their rows and columns of ``similarity`` are NaN


def positional_view(cfg: TransformerConfig, kind: str, t: Trace | None = None,
                    cap: int = MAX_POSITIONS, dim_cap: int = MAX_DIMS) -> PositionalView:
    """The first positions of a sinusoidal or learned table, for the config's E and M.

    A learned table is the traced model's own (from ``t``) when the config uses learned
    positions and the trace holds values; otherwise a freshly seeded table of the same size,
    which before training is plain noise. Only ``min(M, cap)`` positions are ever built.
    """
    P = min(cfg.M, cap)
    if kind == "sinusoidal":
        table = sinusoidal_table(P, cfg.E)  # (P, E)
        note = "fixed: the same for every model, computed from the formula"
    elif kind == "learned":
        if t is not None and not t.shape_only and cfg.positional == "learned":
            side = "tgt" if cfg.arch == "decoder-only" else "src"  # a decoder-only model's one sequence is its target
            table = t.tensors[f"{side}.pos"][:P]  # (M, E) -> (P, E)
            note = ("the traced model's own table, at initialisation (untrained)" if t.weights.startswith("untrained")
                    else f"the model's own table, {t.weights}")
        else:
            with torch.no_grad():
                pe = seeded(PositionalEncoding, cfg.E, "learned", P, seed=cfg.seed)
                table = pe(P)  # (P, E)
            note = "a freshly seeded table of this size, at initialisation (untrained: random)"
    else:
        raise ValueError(f"kind={kind!r} must be 'sinusoidal' or 'learned'")
    dims = shown_dims(cfg.E, dim_cap)
    with torch.no_grad():
        unit = torch.nn.functional.normalize(table.float(), dim=1)  # (P, E), each row length 1 (a zero row stays 0)
        similarity = unit @ unit.T  # (P, E) @ (E, P) -> (P, P)
        # A zero vector (sinusoidal PE[0] at E = 1) has no direction: its cosine is 0 / 0, NaN, not the
        # 0 that normalize leaves.
        zero = table.float().abs().amax(dim=1) == 0  # (P,)
        similarity[zero, :] = float("nan")
        similarity[:, zero] = float("nan")
        shown = table[:, dims]  # (P, len(dims))
    return PositionalView(kind=kind, positions=P, dims=dims, table=shown.tolist(),
                          similarity=similarity.tolist(), note=note, zero_positions=zero.nonzero().flatten().tolist())


def most_alike_pair(v: PositionalView) -> float | None:
    """The highest cosine similarity between two different shown positions (undefined ones left out),
    or None when fewer than two positions have one. Random vectors in few dimensions often point
    alike (at E = 1 any two nonzero ones score +1 or -1), so a sentence about a random table's
    likeness reads this instead of promising that only the diagonal is alike."""
    pairs = [s for i, row in enumerate(v.similarity) for j, s in enumerate(row) if i != j and s == s]  # NaN != NaN
    return max(pairs, default=None)


def sinusoid_curves(E: int, dims: list[int], positions: int) -> dict[int, list[float]]:
    """Sinusoidal values along positions 0..positions-1 for a few dimensions (capped lengths)."""
    P = max(1, min(positions, MAX_CURVE_POSITIONS))
    dims = [d for d in dims if 0 <= d < E][:8]
    table = sinusoidal_table(P, E)  # (P, E); P <= 512, so at most 512 * E floats
    return {d: table[:, d].tolist() for d in dims}


@dataclass(frozen=True)
class MemoryPoint:
    """Bytes of one forward pass that keeps every layer's activations, at source and target length
    M, split by how they grow."""

    M: int
    params: int
    linear: int  # activations that grow with M
    attention: int  # scores and weights: grow with M^2
    vocab: int  # logits and probabilities: grow with M_target


def memory_curve(cfg: TransformerConfig, top: int | None = None) -> tuple[list[MemoryPoint], int | None]:
    """Every layer's activations at M = M_target = 1, 2, 4, ..., and the first M where the attention
    maps outweigh the rest.

    Pure arithmetic on the config (core.memory.every_layer, not the trace's own budget estimate,
    whose crossover would move with the number of layers), so any size is free to draw. The
    crossover is the exact smallest M (any whole number, not only a power of two), and the curve
    gets a point there too. The range reaches at least four times past the crossover and the
    config's own M, up to the longest M the config allows (MAX_M, unless N x nhead maps at that
    length would be too large for PyTorch to size).
    """
    def point(m: int) -> MemoryPoint:
        target = {} if cfg.M_target is None else {"M_target": m}  # a single stack has no target length
        est = every_layer(cfg.replace(M=m, max_len=max(m, cfg.max_len), **target))
        return MemoryPoint(M=m, params=est.params, linear=est.linear, attention=est.attention, vocab=est.vocab)

    def attention_wins(m: int) -> bool:
        p = point(m)
        return p.attention > p.linear + p.vocab

    longest = longest_sequence(cfg.N, cfg.nhead)
    lengths = [2 ** k for k in range(int(math.log2(longest)) + 1)]
    crossover = None
    if attention_wins(longest):
        # The attention term grows like M^2 and the others like M, so once attention wins it keeps
        # winning: bisect for the first M where it does.
        low, high = 0, longest  # attention does not win at low (or low is 0); it wins at high
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (low, mid) if attention_wins(mid) else (mid, high)
        crossover = high
        lengths = sorted(set(lengths) | {crossover})
    points = [point(m) for m in lengths]
    if top is None:
        top = max(4096, 4 * cfg.M, 4 * (crossover or 1))
    return [p for p in points if p.M <= top], crossover


def layer_crossover(cfg: TransformerConfig) -> int:
    """The first M (= M_target) at which one encoder and one decoder layer's attention maps
    outweigh the other activations of those two layers.

    Per layer pair, with M_target = M: the maps are 2 x 3 x N x nhead x M^2 floats (scores and
    weights of the three attentions) and the rest N x M x (24 E + 2 d_ff) (see
    core.memory._floats). So the maps win once M > (12 E + d_ff) / (3 nhead), about 5.3 d_k when
    d_ff = 4E. N cancels out, and so does the number of layers.
    """
    if cfg.arch != "encoder-decoder":  # one layer, one attention: 2 N nhead M² against N M (9E + d_ff)
        return layer_crossover_one_stack(cfg)
    return (12 * cfg.E + cfg.d_ff) // (3 * cfg.nhead) + 1


def layer_crossover_one_stack(cfg: TransformerConfig) -> int:
    """For a single stack: the first M at which one layer's attention maps (scores and weights, 2 x N x nhead x
    M^2 floats) outweigh its other activations, N x M x (9E + F) with F = d_ff (3 d_ff for SwiGLU, whose gate and
    up are kept too): M > (9E + F) / (2 nhead)."""
    F = 3 * cfg.d_ff if cfg.activation == "swiglu" else cfg.d_ff
    return (9 * cfg.E + F) // (2 * cfg.nhead) + 1


def limit_torch_threads(n: int = 1) -> None:
    """Run PyTorch's operators on ``n`` threads (the app calls this once, at start).

    The app's passes are many small operators. On a machine whose cores are shared (a hosted
    app, or a laptop busy with other work) PyTorch's default pool of one thread per core spends
    most of its time waiting at barriers. One thread per pass also lets concurrent sessions use
    the other cores.
    """
    torch.set_num_threads(max(1, int(n)))


def context_cost(cfg: TransformerConfig, tokens: int, bytes_per_number: int = FP16_BYTES,
                 nhead_kv: int | None = None) -> int:
    """Bytes of one sequence's cache (N = 1) holding ``tokens`` positions: 2 · layers · nhead_kv · d_k · tokens ·
    bytes, what a served model sets aside per conversation."""
    return kv_cache_bytes(cfg.replace(N=1, M=tokens, max_len=max(cfg.max_len, tokens)), 0, bytes_per_number,
                          nhead_kv)


@dataclass(frozen=True)
class RelativeBuckets:
    """T5's bucket of every (query i, key j) pair of one stack, cut for drawing: ``buckets[i][j]``."""

    stack: str  # "encoder" or "decoder"
    bidirectional: bool  # the encoder's keys after the query get buckets of their own; the decoder's are masked
    length: int  # the stack's sequence: M, or M_target for an encoder-decoder's decoder
    positions: int  # positions shown (at most MAX_POSITIONS)
    buckets: list[list[int]]
    offsets: dict[int, tuple[int, int]]  # each bucket shown -> the lowest and highest offset j - i it holds here


def relative_view(cfg: TransformerConfig, cap: int = MAX_POSITIONS) -> list[RelativeBuckets]:
    """Each stack's buckets over its first positions, from the function the model itself uses
    (core.positions.relative_position_bucket): the encoder's bidirectional, the decoder's causal."""
    stacks = {"encoder-decoder": [("encoder", True, cfg.M), ("decoder", False, cfg.M_target)],
              "decoder-only": [("decoder", False, cfg.M)], "encoder-only": [("encoder", True, cfg.M)]}[cfg.arch]
    out = []
    for stack, bidirectional, L in stacks:
        P = min(L, cap)
        offset = torch.arange(P)[None, :] - torch.arange(P)[:, None]  # (P, P): key j minus query i
        bucket = relative_position_bucket(offset, bidirectional, cfg.relative_buckets, cfg.relative_max_distance)
        offsets: dict[int, tuple[int, int]] = {}
        seen = relative_position_bucket(torch.arange(-(P - 1), P), bidirectional, cfg.relative_buckets,
                                        cfg.relative_max_distance)  # (2P - 1,): every offset shown, once
        for d, b in zip(range(-(P - 1), P), seen.tolist()):
            low, high = offsets.get(b, (d, d))
            offsets[b] = (min(low, d), max(high, d))
        out.append(RelativeBuckets(stack=stack, bidirectional=bidirectional, length=L, positions=P,
                                   buckets=bucket.tolist(), offsets=dict(sorted(offsets.items()))))
    return out
