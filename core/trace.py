"""One live forward pass, recorded: the 14 rows of the seed note, the extras, the parameters.

``trace(cfg)`` builds the model a config describes, runs it once on a seeded batch and reads every
shape off the live tensors. ``trace(cfg, text=...)`` runs it on a learner's own text instead, and
``model=`` runs a model the caller already has (a trained one). Over the memory budget it runs the very same code on PyTorch's meta
device instead (``shape_only``), so even GPT-3 sizes cost nothing. It caches nothing: the app
layer does that, keyed by the (frozen, hashable) config.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from .config import TransformerConfig
from .experts import Experts
from .latent_attention import LatentAttention
from .memory import DEFAULT_BUDGET_BYTES, LATENT_PARTS, MemoryEstimate, estimate, kv_cache_summary
from .model import Transformer, generate_key_padding_mask, generate_square_subsequent_mask
from .rows import RowSpec, extras_for, rows_for
from .shapes import MetaShapeCache
from .source import source_for
from .tokens import TokenBatch, TokenizedText
from .tensor_lists import MAX_VALUES, plain_values
from .window import sliding_window_mask

PAD_ID = 0  # padding token of the seeded batch: masked out as a key
BOS_ID = 1  # start token of the seeded batch: the first decoder input ("outputs shifted right")
UNTRAINED = "untrained: seeded random weights"


@dataclass(frozen=True)
class TensorRow:
    """One tensor of the pass: its shape is read off the live (or meta) tensor."""

    index: int
    key: str
    name: str
    shape: tuple[int, ...]
    formula: str
    dtype: str
    numel: int
    bytes: int
    description: str
    hook: str
    code: str
    head: int | None = None  # the head this row shows of a tensor stacked over heads

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "key": self.key, "name": self.name, "shape": list(self.shape),
                "formula": self.formula, "dtype": self.dtype, "numel": self.numel, "bytes": self.bytes,
                "description": self.description, "hook": self.hook}


@dataclass(frozen=True)
class Trace:
    """What one pass showed. ``tensors`` holds the recorded values (empty when shape-only)."""

    config: TransformerConfig
    rows: tuple[TensorRow, ...]
    extras: tuple[TensorRow, ...]
    params: dict[str, int]
    shape_only: bool
    estimate: MemoryEstimate
    budget_bytes: int
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    tensors: dict[str, Tensor] = field(default_factory=dict, repr=False)
    batch: TokenBatch | None = None  # the text (or task sequence) the pass read; None: seeded random ids
    weights: str = UNTRAINED  # what the weights are: untrained, or which training made them
    active_params: int | None = None  # parameters one token's pass touches (core.trace.active_count)

    def row(self, key: str) -> TensorRow:
        """A row or extra by key, e.g. 'attention_scores' or 'causal_mask'."""
        for r in self.rows + self.extras:
            if r.key == key:
                return r
        raise KeyError(key)

    def value(self, key: str) -> Tensor:
        """A row's or extra's live tensor, as its row shows it (one head of a stacked tensor, for a per-head row).

        Raises ValueError after a shape-only pass, which computed no values."""
        r = self.row(key)
        if self.shape_only:
            raise ValueError(f"{r.name} has no values: this pass ran shape-only, on the meta device")
        t = self.tensors[r.hook]
        if r.head is None:
            return t
        return t[r.head] if t.dim() == 3 else t[:, r.head]  # (nhead, E, d_k) or (N, nhead, ..)

    def _row_dict(self, r: TensorRow, values: bool) -> dict[str, Any]:
        out = r.to_dict()
        ids = r.key == "input_tokens" and self.batch is not None
        if ids and self.shape_only:  # no pass computed them, but the text's ids are known all the same
            out["values"] = padded_ids(self.batch.source)[0].tolist()
        elif not self.shape_only and (ids or (values and r.numel <= MAX_VALUES)):
            out["values"] = plain_values(self.value(r.key))
        return out

    def to_dict(self, values: bool = False) -> dict[str, Any]:
        """Plain JSON-able values: what the CLI's --json prints and the app downloads.

        ``values`` adds the numbers of every row and extra of at most MAX_VALUES elements; the input tokens'
        ids are always there when the pass read a text."""
        text = {} if self.batch is None else {
            "tokens": [list(s) for s in self.batch.tokens("source")],
            "vocab": list(self.batch.labels)} | (
            {"target_tokens": [list(s) for s in self.batch.tokens("target")]}
            if self.config.arch == "encoder-decoder" else {})
        return {
            "config": self.config.to_dict(),
            "shape_only": self.shape_only,
            "weights": self.weights,
            "rows": [self._row_dict(r, values) for r in self.rows],
            "extras": [self._row_dict(r, values) for r in self.extras],
            "params": dict(self.params) | {"active": self.params["total"] if self.active_params is None
                                           else self.active_params},
            "estimated_bytes": self.estimate.total,
            "budget_bytes": self.budget_bytes,
        } | text | ({"kv_cache": kv_cache_summary(self.config)} if self.config.arch == "decoder-only" else {}) | (
            {"moe": self.moe_counts()} if self.config.moe else {})

    def moe_counts(self) -> dict[str, Any]:
        """Tokens per expert in the first layer with experts: counted on a live pass; unknown on a shape-only one,
        where only the even share N·M·top_k / n_experts can be said."""
        cfg = self.config
        counts = None if self.shape_only else self.value("tokens_per_expert").tolist()
        return {"tokens_per_expert": counts, "known": counts is not None,
                "even_share": cfg.N * cfg.M * cfg.top_k / cfg.n_experts}


_DEEP_LAYER = re.compile(r"^(enc|dec)\.(\d+)\.(.+)$")


class TraceRecorder(dict):
    """Keeps what the explorer shows: every hook of layer 0, and only the attention weights
    (for the heatmaps) of deeper layers. Dropping the rest lets a real pass go further before
    the memory budget forces a shape-only one; ``core.memory.estimate`` counts exactly this set.
    ``ffn_layer`` keeps one more layer's FFN: the first with experts, when dense layers come first.
    """

    def __init__(self, ffn_layer: int = 0):
        super().__init__()
        self.ffn_layer = str(ffn_layer)

    def __setitem__(self, name: str, tensor: Tensor) -> None:
        match = _DEEP_LAYER.match(name)
        if match and match.group(2) != "0" and not match.group(3).endswith("attn.weights") and not (
                match.group(2) == self.ffn_layer and match.group(3).startswith("ffn.")):
            return
        super().__setitem__(name, tensor)


def padded_positions(cfg: TransformerConfig) -> int:
    """How many positions at the end of the last source sequence the trace's batch pads: the last
    quarter when there are N > 1 sequences of M >= 4 tokens (so the heatmaps show the key padding
    mask beside unpadded sequences), else none; none for a decoder-only model, whose causal mask is the one to see."""
    return cfg.M // 4 if cfg.N > 1 and cfg.M >= 4 and cfg.arch != "decoder-only" else 0


def make_batch(cfg: TransformerConfig, device: str = "cpu") -> tuple[Tensor, Tensor]:
    """Seeded source (N, M) and target (N, M_target) ids; the last source sequence is padded.

    Padding the last quarter of the last sequence (when N > 1 and M >= 4) makes the key padding
    mask visible in the heatmaps. On the meta device the ids have a shape and no values.
    """
    N, M, T = cfg.N, cfg.M, cfg.M_target or 0  # a single stack has no target: tgt is (N, 0)
    if device == "meta":
        return (torch.empty(N, M, dtype=torch.long, device="meta"),  # (N, M)
                torch.empty(N, T, dtype=torch.long, device="meta"))  # (N, M_target)
    gen = torch.Generator().manual_seed(cfg.seed)
    low = min(2, cfg.vocab_size - 1)  # ids 0 and 1 are padding and start, when the vocabulary allows
    src = torch.randint(low, cfg.vocab_size, (N, M), generator=gen)  # (N, M)
    padded = padded_positions(cfg)
    if padded:
        src[-1, M - padded:] = PAD_ID
    tgt = torch.randint(low, cfg.vocab_size, (N, T), generator=gen)  # (N, M_target)
    tgt[:, :1] = BOS_ID
    return src, tgt


def active_count(model: Transformer) -> int:
    """Parameters one token's pass touches, counted on the module: all of them less, in every Experts FFN, the
    routed experts it skips (it runs top_k of them; the experts are alike, so which ones does not matter).
    The routed experts' weights are stacked along their first axis: slices top_k onwards are the skipped ones."""
    skipped = sum(p[m.top_k:].numel() for m in model.modules() if isinstance(m, Experts)
                  for p in m.experts.parameters())
    return sum(p.numel() for p in model.parameters()) - skipped


def _param_groups(model: Transformer) -> dict[str, int]:
    """Live parameter counts per component (a tied matrix is counted once)."""
    if model.arch != "encoder-decoder":
        return _one_stack_groups(model)
    groups = {
        "token embeddings": 0, "positional table": 0, "encoder self-attention": 0, "encoder FFN": 0,
        "encoder LayerNorms": 0, "decoder masked self-attention": 0, "decoder cross-attention": 0,
        "decoder FFN": 0, "decoder LayerNorms": 0, "output layer": 0,
    }
    for name, p in model.named_parameters():  # named_parameters skips a shared tensor's second name
        side = "encoder" if name.startswith("encoder") else "decoder"
        if name.startswith(("src_embed", "tgt_embed")):
            key = "token embeddings"
        elif name.startswith("positional") or ".relative." in name:  # T5's bias table, in each stack's layer 0
            key = "positional table"
        elif name.startswith("generator"):
            key = "output layer"
        elif ".cross_attn." in name:
            key = "decoder cross-attention"
        elif ".self_attn." in name:
            key = "encoder self-attention" if side == "encoder" else "decoder masked self-attention"
        elif ".ffn." in name:
            key = f"{side} FFN"
        else:
            key = f"{side} LayerNorms"
        groups[key] += p.numel()
    groups["total"] = sum(groups.values())
    return groups


def _one_stack_groups(model: Transformer) -> dict[str, int]:
    """A single stack's parameter counts: its self-attention, FFN and norms (the final one too)."""
    stack = model.decoder if model.encoder is None else model.encoder
    latent = isinstance(stack[0].self_attn, LatentAttention)  # its parts are counted one by one
    attention = dict.fromkeys(LATENT_PARTS.values()) if latent else ["self-attention"]
    groups = dict.fromkeys(["token embeddings", "positional table", *attention, "FFN", "norms", "output layer"], 0)
    moe = {"experts": "experts", "shared": "shared experts", "router": "router"}  # an Experts FFN's parts
    if any(isinstance(m, Experts) for m in model.modules()):
        groups |= dict.fromkeys(moe.values(), 0)
    for name, p in model.named_parameters():
        parts = name.split(".")
        part = parts[2] if name.startswith(("encoder.", "decoder.")) else parts[0]
        if part == "self_attn":
            key = LATENT_PARTS[parts[3]] if latent else "self-attention"
        else:
            key = {"src_embed": "token embeddings", "positional": "positional table", "generator": "output layer",
                   "ffn": "FFN", "relative": "positional table"}.get(part, "norms")
        if key == "FFN" and parts[3] in moe:
            key = moe[parts[3]]
        groups[key] += p.numel()
    groups["total"] = sum(groups.values())
    return groups


def norm_statistics(cfg: TransformerConfig, rec: dict[str, Tensor]) -> dict[str, Tensor]:
    """What layer 0's first norm measures on its input, per position: LayerNorm's mean and spread, or RMSNorm's
    root mean square. Its input is the layer's input (pre-norm) or that plus the attention output (post-norm)."""
    side, stack = ("tgt", "dec") if cfg.arch == "decoder-only" else ("src", "enc")
    x = rec[f"{side}.sum"]  # (N, M, E)
    if not cfg.norm_first:
        x = x + rec[f"{stack}.0.self_attn.out"]  # (N, M, E)
    if cfg.norm == "rmsnorm":
        return {"norm_rms": x.pow(2).mean(-1).sqrt()}  # (N, M)
    return {"norm_mean": x.mean(-1), "norm_std": x.var(-1, unbiased=False).sqrt()}  # (N, M) each


def padded_ids(seqs: tuple[tuple[int, ...], ...], device: str = "cpu") -> tuple[Tensor, Tensor]:
    """Sequences of different lengths as one (N, L) id tensor, and the key padding mask (N, L) that blocks
    the positions past each one's end. The mask comes from the lengths, not from an id: here id 0 is the
    start token, a real token."""
    L = max(len(s) for s in seqs)
    if device == "meta":
        return (torch.empty(len(seqs), L, dtype=torch.long, device="meta"),  # (N, L)
                torch.empty(len(seqs), L, dtype=torch.bool, device="meta"))  # (N, L)
    ids = torch.zeros(len(seqs), L, dtype=torch.long)  # (N, L); the padding's id is never read as a key
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = torch.tensor([len(s) for s in seqs])  # (N,)
    return ids, torch.arange(L)[None, :] >= lengths[:, None]  # (N, L), (N, L)


def batch_tensors(cfg: TransformerConfig, batch: TokenBatch | None, device: str) -> tuple[Tensor, Tensor, Tensor]:
    """Source ids (N, M), target ids (N, M_target) and the source's key padding mask (N, M): from the given
    batch, or seeded random ids."""
    if batch is None:
        src, tgt = make_batch(cfg, device)  # (N, M), (N, M_target)
        return src, tgt, generate_key_padding_mask(src, PAD_ID)  # (N, M)
    src, padding = padded_ids(batch.source, device)  # (N, M) each
    if cfg.arch != "encoder-decoder":
        return src, src[:, :0], padding  # a single stack has no target: tgt is (N, 0)
    tgt, _ = padded_ids(batch.target, device)  # (N, M_target); the causal mask hides the padding behind each line
    return src, tgt, padding


def run_pass(model: Transformer, cfg: TransformerConfig, device: str, rec: dict[str, Tensor],
             batch: TokenBatch | None = None) -> None:
    """One recorded forward pass on the trace's batch, with the masks the family uses."""
    src, tgt, padding = batch_tensors(cfg, batch, device)  # (N, M), (N, M_target), (N, M)
    if cfg.arch == "decoder-only":  # no padding: the causal mask is the one to see
        causal = record_mask(rec, "tgt_mask", generate_square_subsequent_mask(cfg.M, device))  # (M, M)
        cache: list[dict[str, Tensor]] = [{} for _ in range(cfg.layers)]  # filled as a generation's first step would
        model(None, src, tgt_mask=causal, rec=rec, cache=cache)
        if not cfg.window:
            rec["kv_cache"] = stacked_cache(cache)  # (layers, 2, N, nhead_kv, M, d_k), or the latents'
            return
        layers = [torch.stack((c["k"], c["v"])) for c in cache]  # each (2, N, nhead_kv, M or M_window, d_k)
        # Windowed layers keep at most `window` positions, full ones all M: two stacks of their own.
        rec["kv_cache"] = torch.stack([c for i, c in enumerate(layers) if cfg.windowed(i)])  # (windowed_layers, 2, ...)
        if cfg.global_every:
            rec["kv_cache_global"] = torch.stack([c for i, c in enumerate(layers) if not cfg.windowed(i)])
        record_mask(rec, "window_mask", sliding_window_mask(cfg.M, cfg.M, cfg.window, device))  # (M, M)
        rec["windowed_layers"] = torch.tensor([cfg.windowed(i) for i in range(cfg.layers)], device=device)  # (layers,)
        return
    padding = record_mask(rec, "src_key_padding_mask", padding)  # (N, M)
    if cfg.arch == "encoder-only":
        model(src, src_key_padding_mask=padding, rec=rec)
        return
    tgt_mask = record_mask(rec, "tgt_mask", generate_square_subsequent_mask(cfg.M_target, device))
    model(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=padding, memory_key_padding_mask=padding, rec=rec)


def stacked_cache(cache: list[dict[str, Tensor]]) -> Tensor:
    """Every layer's cache as one tensor: K and V (layers, 2, N, nhead_kv, S, d_k), or under latent attention
    the latent and the rotary key side by side (layers, N, S, kv_lora_rank + rope_head_dim)."""
    if "latent" in cache[0]:
        return torch.stack([torch.cat((c["latent"], c["k_rope"]), dim=-1)
                            for c in cache])  # (layers, N, S, kv_lora_rank + rope_head_dim)
    return torch.stack([torch.stack((c["k"], c["v"])) for c in cache])  # (layers, 2, N, nhead_kv, S, d_k)


def _select(spec: RowSpec, tensor: Tensor) -> Tensor:
    """The note's per-head view: head ``spec.head`` of a stacked tensor."""
    if spec.head is None:
        return tensor
    return tensor[spec.head] if tensor.dim() == 3 else tensor[:, spec.head]  # (nhead, E, d_k) or (N, nhead, ..)


def _rows(specs: tuple[RowSpec, ...], rec: dict[str, Tensor], attention: str = "mha") -> tuple[TensorRow, ...]:
    out = []
    for spec in specs:
        t = _select(spec, rec[spec.hook])
        out.append(TensorRow(
            index=spec.index, key=spec.key, name=spec.name, shape=tuple(t.shape), formula=spec.formula,
            dtype=str(t.dtype).replace("torch.", ""), numel=t.numel(), bytes=t.numel() * t.element_size(),
            description=spec.description, hook=spec.hook, code=source_for(spec.hook, attention), head=spec.head,
        ))
    return tuple(out)


def _check_batch(cfg: TransformerConfig, batch: TokenBatch) -> None:
    """The config must have the sizes the text sets, or the pass would not be the text's."""
    want = {"N": batch.N, "M": batch.M, "vocab_size": batch.vocab_size}
    if cfg.arch == "encoder-decoder":
        if batch.target is None:
            raise ValueError("an encoder-decoder reads a target too: give the batch the decoder's input ids")
        want["M_target"] = batch.M_target
    wrong = [f"{k}={getattr(cfg, k)} (the text has {k}={v})" for k, v in want.items() if getattr(cfg, k) != v]
    if wrong:
        raise ValueError(f"the config does not fit the text: {', '.join(wrong)}; "
                         "build it with core.tokens.text_config(cfg, text)")


def _check_model(cfg: TransformerConfig, model: Transformer) -> None:
    have = {"arch": model.arch, "E": model.E, "nhead": model.nhead, "vocab_size": model.vocab_size}
    wrong = [f"{k}={v!r}" for k, v in have.items() if getattr(cfg, k) != v]
    if wrong:
        raise ValueError(f"the model given has {', '.join(wrong)}, unlike the config; trace it with its own config")


def trace(cfg: TransformerConfig, *, text: TokenizedText | TokenBatch | None = None,
          model: Transformer | None = None, weights: str | None = None,
          budget_bytes: int = DEFAULT_BUDGET_BYTES, shape_only: bool | None = None) -> Trace:
    """Run one recorded forward pass of the model ``cfg`` describes.

    ``text`` (a tokenized text, or any TokenBatch such as a task's sequence) is the batch the pass reads,
    instead of seeded random ids; ``cfg`` must have its sizes (``core.tokens.text_config`` makes such a
    config). ``model`` is an already built model of this config (a trained one, say), run as it is;
    ``weights`` then says what its weights are, for every page to label.
    ``shape_only=None`` decides by the memory estimate: over ``budget_bytes`` the pass runs on the
    meta device. True or False forces the choice (False still refuses to go over the budget).
    """
    batch = text.batch() if isinstance(text, TokenizedText) else text
    if batch is not None:
        _check_batch(cfg, batch)
    if model is not None:
        _check_model(cfg, model)
    est = estimate(cfg)
    over = est.over(budget_bytes)
    if shape_only is False and over:
        raise ValueError(f"a real pass of this config needs about {est.total} bytes, over the budget of "
                         f"{budget_bytes}; trace it shape-only instead")
    meta = (over if shape_only is None else shape_only) and model is None  # a given model already lives on the CPU
    device = "meta" if meta else "cpu"
    rec = TraceRecorder(cfg.first_dense_layers)
    model = Transformer.from_config(cfg, device=device) if model is None else model
    with torch.inference_mode(), (MetaShapeCache() if meta else contextlib.nullcontext()):
        run_pass(model, cfg, device, rec, batch)
        stack = "dec" if model.encoder is None else "enc"
        attn = (model.decoder if model.encoder is None else model.encoder)[0].self_attn
        for name, W in attn.head_weights().items():
            rec[f"{stack}.0.self_attn.{name}"] = W.detach()  # (nhead or nhead_kv, E, d_k), a view of the weight
        if cfg.attention == "mha" and (cfg.arch != "encoder-decoder" or cfg.nhead_kv != cfg.nhead):
            group = cfg.nhead // cfg.nhead_kv  # query heads per K/V head
            rec[f"{stack}.0.self_attn.kv_head"] = torch.arange(cfg.nhead, device=device) // group  # (nhead,)
        if cfg.arch != "encoder-decoder" or cfg.norm_first or cfg.norm != "layernorm":
            rec.update({f"{stack}.0.{k}": v for k, v in norm_statistics(cfg, rec).items()})  # (N, M) each
        params = _param_groups(model)
    return Trace(
        config=cfg,
        rows=_rows(rows_for(cfg), rec, cfg.attention),
        extras=_rows(extras_for(cfg), rec, cfg.attention),
        params=params,
        active_params=active_count(model),
        shape_only=meta,
        estimate=est,
        budget_bytes=budget_bytes,
        shapes={k: tuple(v.shape) for k, v in rec.items()},
        tensors={} if meta else rec,
        batch=batch,
        weights=weights or UNTRAINED,
    )


def record_mask(rec: dict[str, Tensor], name: str, mask: Tensor) -> Tensor:
    """Keep a mask the pass uses beside the tensors the model records."""
    rec[name] = mask
    return mask
