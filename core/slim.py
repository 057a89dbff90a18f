"""A slim pass: one layer's attention weights for one sequence, when a whole pass is over budget.

Why: a shape-only trace has no values, so a model over the memory budget (the paper's big model,
say) had no heatmaps at all, though one map needs only a sliver of the pass. Three facts make the
sliver cheap and still exact:

- Sequences do not mix: attention, the FFN and LayerNorm all work within one batch item, so item
  ``item`` run alone (N = 1) gives the weights it gets in the whole batch.
- Layers after the one shown, and the output layer, do not touch it, so they are never built.
- The weights are drawn from one seeded stream in module order (core.model.init_weights), so any
  one module can be drawn on its own at its place in the stream: it gets the very values the whole
  model would have.

So the model is laid out on PyTorch's meta device (no memory), and each block is made real, run
and made meta again in turn: the embeddings, then each layer (for a decoder map, the whole encoder
first). What is held at once is the largest block's weights and one sequence's activations, not the
whole model (``slim_estimate``, which also caps the weights drawn: MAX_SLIM_DRAWS).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from typing import Iterator

import torch
from torch import Tensor, nn

from .config import TransformerConfig
from .memory import (DEFAULT_BUDGET_BYTES, FLOAT_BYTES, INDEX_BYTES, attention_params, estimate, ffn_params,
                     layernorm_params, param_counts)
from .model import (CHUNK_NUMEL, Piece, Transformer, _draws, attention_bias, fill_chunks, generate_key_padding_mask,
                    generate_square_subsequent_mask)
from .trace import PAD_ID, make_batch

STACKS = ("enc", "dec")
BLOCKS = ("self_attn", "cross_attn")


@dataclass(frozen=True)
class _Slot:
    """Where one parameter's values come from: ``offset`` in the weight stream, spread ``bound``;
    or, when not ``random``, the constant ``bound`` (LayerNorm gains and biases)."""

    offset: int
    bound: float
    random: bool


def _layout(model: Transformer) -> dict[tuple[int, str], _Slot]:
    """Each parameter's slot, keyed by (id of the module that holds it, its name there).

    Keyed by module, not by tensor, because making a module real or meta replaces its tensors
    while the module objects stay.
    """
    owner: dict[int, list[tuple[int, str]]] = {}
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            owner.setdefault(id(p), []).append((id(module), name))
    slots: dict[tuple[int, str], _Slot] = {}
    offset = 0
    for tensor, bound, random in _draws(model):  # the order init_weights draws in
        for key in owner[id(tensor)]:
            slots[key] = _Slot(offset, bound, random)
        offset += tensor.numel() if random else 0
    return slots


def _draw(module: nn.Module, slots: dict[tuple[int, str], _Slot], seed: int) -> None:
    """Fill a freshly made-real module from its slots: the values init_weights gives the whole model."""
    wanted: dict[int, list[Piece]] = {}  # chunk -> its pieces, as init_weights lays them out
    for m in module.modules():
        for name, p in m.named_parameters(recurse=False):
            slot = slots[(id(m), name)]
            if not slot.random:
                p.data.fill_(slot.bound)
                continue
            flat, offset = p.data.view(-1), slot.offset  # any shape -> (numel,)
            while flat.numel():  # a tensor may run over chunk boundaries
                chunk, start = divmod(offset, CHUNK_NUMEL)
                take = min(flat.numel(), CHUNK_NUMEL - start)
                wanted.setdefault(chunk, []).append((start, flat[:take].numpy(), slot.bound))  # (take,) in this chunk
                flat, offset = flat[take:], offset + take  # (numel,) -> (numel - take,): the rest, on
    fill_chunks(seed, wanted)


class _Blocks:
    """Makes blocks of the meta-laid-out model real one at a time, all in one reused buffer.

    Why one buffer: made real tensor by tensor, a layer's weights came from the C heap piece by
    piece and, freed, left holes that the next layer did not always fit (a slim pass of the paper's
    big model grew by about 32 MiB a layer); and a fresh buffer per block, given back whole, made
    every block fault its pages in again (there, the deepest map took 1.5 s that way against 0.66 to
    0.83 s with one buffer, both drawn on one thread). The buffer is as large as the largest block
    that will be used, and each block overwrites it.
    """

    def __init__(self, model: Transformer, seed: int, blocks: list[list[nn.Module]]):
        self.slots, self.seed = _layout(model), seed
        largest = max(sum(p.numel() for module in block for p in module.parameters()) for block in blocks)
        self.buffer = torch.empty(largest)  # (largest block's numel,)

    @contextlib.contextmanager
    def real(self, modules: list[nn.Module]) -> Iterator[None]:
        """Hold ``modules`` in the buffer, with their weights drawn, for the block; meta again after."""
        start = 0
        for module in modules:
            for m in module.modules():
                for name, p in m.named_parameters(recurse=False):
                    view = self.buffer[start:start + p.numel()].view(p.shape)  # (numel,) -> the parameter's shape
                    m._parameters[name] = nn.Parameter(view, requires_grad=False)
                    start += p.numel()
            _draw(module, self.slots, self.seed)
        try:
            yield
        finally:
            for module in modules:
                module.to_empty(device="meta")


def _check(cfg: TransformerConfig, stack: str, block: str, layer: int, item: int) -> None:
    """ValueError, naming the way out, for an attention this model does not have or a layer or item
    out of range: the recorder's names (enc.3.self_attn) would otherwise fail as a bare KeyError."""
    if stack not in STACKS or block not in BLOCKS or (stack, block) == ("enc", "cross_attn"):
        raise ValueError(f"({stack!r}, {block!r}) is not an attention of this model: the encoder has "
                         "'self_attn', the decoder 'self_attn' and 'cross_attn'")
    for name, value, limit in (("layer", layer, cfg.layers), ("item", item, cfg.N)):
        if not 0 <= value < limit:
            raise ValueError(f"{name}={value} is out of range: this config has {limit} (0 to {limit - 1})")


MAX_SLIM_DRAWS = 300_000_000  # weights one slim pass may draw: the paper's big model's deepest map draws
# 214 million in about 0.6 s here. The budget bounds a slim pass's memory, not its work: 96 + 96 layers
# of E = 1536 fit in 173.8 MiB a layer at a time, and their deepest map took 13.5 s (6.3 billion weights).


@dataclass(frozen=True)
class SlimEstimate:
    """What a slim pass holds and does, for its deepest map (the decoder's last layer), in parts:
    the pages name the largest part when it does not fit."""

    tables: int  # bytes of one token table (vocab_size x E) with a learned positional table, if any
    layer: int  # bytes of the largest layer's weights, a decoder layer's
    maps: int  # bytes of one sequence's attention scores and weights, through one layer of each kind
    rest: int  # one sequence's other activations, and the temporaries of a layer while it runs
    ids: int  # the whole batch's token ids, which make_batch draws before one sequence is taken
    draws: int  # weights drawn: every one but the output layer's

    @property
    def total(self) -> int:
        """Bytes held at most: one block's weights at a time (the buffer), and the activations."""
        return max(self.tables, self.layer) + self.maps + self.rest + self.ids

    def over(self, budget_bytes: int) -> bool:
        """True when a slim pass is refused: over the memory budget, or more weights to draw than
        MAX_SLIM_DRAWS."""
        return self.total > budget_bytes or self.draws > MAX_SLIM_DRAWS


def slim_estimate(cfg: TransformerConfig) -> SlimEstimate:
    """The bound ``slim_attention`` checks, from the config alone.

    Activations are those of a one-sequence, one-layer trace (core.memory.estimate), which counts
    every kind of layer at once, more than a slim pass holds at a time.
    """
    E = cfg.E
    one = estimate(replace(cfg, N=1, layers=1))
    counts = param_counts(cfg)
    return SlimEstimate(
        tables=FLOAT_BYTES * (cfg.vocab_size * E + (cfg.max_len * E if cfg.positional == "learned" else 0)),
        layer=FLOAT_BYTES * (2 * attention_params(E) + ffn_params(E, cfg.d_ff) + 3 * layernorm_params(E)),
        maps=one.attention,
        rest=one.linear + one.transient,
        ids=INDEX_BYTES * cfg.N * (cfg.M + cfg.M_target),
        draws=counts["total"] - counts["output layer"],
    )


def slim_bytes(cfg: TransformerConfig) -> int:
    """Bytes a slim pass holds at most, for any layer and kind (``slim_estimate(cfg).total``)."""
    return slim_estimate(cfg).total


def slim_attention(cfg: TransformerConfig, stack: str, block: str, layer: int, item: int, *,
                   budget_bytes: int = DEFAULT_BUDGET_BYTES) -> dict[str, Tensor]:
    """Run the slim pass; return what a trace would have recorded for this map, for item ``item``
    alone: '{stack}.{layer}.{block}.weights' (1, nhead, L_q, S), the token ids 'src.tokens'
    (1, M) and 'tgt.tokens' (1, M_target), 'src_key_padding_mask' (1, M) and 'tgt_mask'.
    ValueError when even this would not fit ``budget_bytes``, as ``trace`` refuses a real pass.
    """
    _check(cfg, stack, block, layer, item)
    est = slim_estimate(cfg)
    if est.total > budget_bytes:
        raise ValueError(f"a slim pass of this config needs about {est.total} bytes, over the budget of "
                         f"{budget_bytes}; only a shape-only trace fits")
    if est.draws > MAX_SLIM_DRAWS:
        raise ValueError(f"a slim pass of this config draws up to {est.draws:,} weights, more than "
                         f"MAX_SLIM_DRAWS ({MAX_SLIM_DRAWS:,}); use fewer layers or a smaller E or d_ff")
    model = Transformer.from_config(cfg, device="meta")  # the layout only: nothing allocated
    last = layer if stack == "enc" else cfg.layers - 1  # a decoder map needs the whole memory
    untied = stack == "dec" and not cfg.tie_embeddings  # the target side has a table of its own
    tables = [[model.src_embed, model.positional]] + ([[model.tgt_embed, model.positional]] if untied else [])
    layers = [[b] for b in model.encoder[:last + 1]]
    layers += [[b] for b in model.decoder[:layer + 1]] if stack == "dec" else []
    blocks = _Blocks(model, cfg.seed, tables + layers)
    src, tgt = make_batch(cfg)  # (N, M), (N, M_target): the trace's own batch
    src, tgt = src[item:item + 1].clone(), tgt[item:item + 1].clone()  # (1, M), (1, M_target); the batch goes
    padding = generate_key_padding_mask(src, PAD_ID)  # (1, M)
    tgt_mask = generate_square_subsequent_mask(cfg.M_target)  # (M_target, M_target)
    rec: dict[str, Tensor] = {"src.tokens": src, "tgt.tokens": tgt, "src_key_padding_mask": padding,
                              "tgt_mask": tgt_mask}
    with torch.inference_mode():
        # Both sides' embeddings first; a tied table is drawn once for both.
        with blocks.real(tables[0]):
            x = model.embed(src, "src")  # (1, M, E)
            y = model.embed(tgt, "tgt") if stack == "dec" and not untied else None  # (1, M_target, E)
        if untied:
            with blocks.real(tables[1]):
                y = model.embed(tgt, "tgt")  # (1, M_target, E)
        # The same masks, made into biases the same way, as Transformer.encode and .decode make them.
        bias = attention_bias(None, padding, x.dtype)  # (1, 1, 1, M)
        for i in range(last + 1):
            with blocks.real([model.encoder[i]]):
                keep = rec if stack == "enc" and i == layer else None
                x = model.encoder[i](x, bias, None, keep, f"enc.{i}.")  # (1, M, E)
        if stack == "dec":
            self_bias = attention_bias(tgt_mask, None, y.dtype)  # (M_target, M_target)
            for i in range(layer + 1):
                with blocks.real([model.decoder[i]]):
                    keep = rec if i == layer else None
                    y = model.decoder[i](y, x, self_bias, bias, None, None, keep, f"dec.{i}.")  # x is the memory
    name = f"{stack}.{layer}.{block}.weights"
    return {name: rec[name], **{k: rec[k] for k in ("src.tokens", "tgt.tokens", "src_key_padding_mask",
                                                       "tgt_mask")}}
