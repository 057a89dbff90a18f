"""A slim pass: one layer's attention weights for one sequence, when a whole pass is over budget.

Why: a shape-only trace has no values, so a model over the memory budget (the paper's big model,
say) would have no heatmaps at all, though one map needs only a sliver of the pass. Three facts make
the sliver cheap and still exact:

- Sequences do not mix: attention, the FFN and LayerNorm all work within one batch item, so item
  ``item`` run alone (N = 1) gets the weights it gets in the whole batch.
- Layers after the one shown, and the output layer, do not touch it, so they are never built.
- Each block of the model draws its weights from its own seeded generator (core.weights), so a
  block made real on its own gets the very values the whole model would give it.

So the model is laid out on PyTorch's meta device (no memory), and each block is made real, run
and made meta again in turn: the embeddings, then each layer (for a decoder map, the whole encoder
first). What is held at once is one block's weights and one sequence's activations, not the whole
model (``slim_estimate``, which also caps the weights drawn: MAX_SLIM_DRAWS).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Iterator

import torch
from torch import Tensor, nn

from .config import TransformerConfig
from .memory import (DEFAULT_BUDGET_BYTES, FLOAT_BYTES, INDEX_BYTES, attention_params, estimate, ffn_params,
                     latent_attention_params, layernorm_params, moe_layers, moe_params, param_counts)
from .model import Transformer, generate_key_padding_mask, generate_square_subsequent_mask
from .trace import PAD_ID, make_batch
from .weights import blocks, init_block
from .window import sliding_window_mask


@contextlib.contextmanager
def made_real(model: Transformer, seed: int, modules: list[nn.Module]) -> Iterator[None]:
    """Blocks of a meta-laid-out ``model`` on the CPU for the duration, with the weights the whole
    model would have; back on the meta device after.

    Their weights share one allocation, given back whole afterwards, so the C heap keeps no holes
    between layers (docs/design.md, "Slim passes").
    """
    index = {id(block): i for i, block in enumerate(blocks(model))}
    params = [(m, name, p) for module in modules for m in module.modules()
              for name, p in m.named_parameters(recurse=False)]
    buffer = torch.empty(sum(p.numel() for *_, p in params))  # (every weight of the blocks,)
    start = 0
    for m, name, p in params:
        setattr(m, name, nn.Parameter(buffer[start:start + p.numel()].view(p.shape), requires_grad=False))
        start += p.numel()
    try:
        for module in modules:
            init_block(module, seed, index[id(module)])
        yield
    finally:
        for module in modules:
            module.to_empty(device="meta")


def attentions(cfg: TransformerConfig) -> tuple[tuple[str, str], ...]:
    """The (stack, block) attentions this config's model has, in the recorder's names."""
    if cfg.arch == "decoder-only":
        return (("dec", "self_attn"),)
    if cfg.arch == "encoder-only":
        return (("enc", "self_attn"),)
    return (("enc", "self_attn"), ("dec", "self_attn"), ("dec", "cross_attn"))


def _check(cfg: TransformerConfig, stack: str, block: str, layer: int, item: int) -> None:
    """ValueError, naming the way out, for an attention this model does not have or a layer or item
    out of range: the recorder's names (enc.3.self_attn) would otherwise fail as a bare KeyError."""
    if (stack, block) not in attentions(cfg):
        has = ", ".join(f"{s!r} {b!r}" for s, b in attentions(cfg))
        raise ValueError(f"({stack!r}, {block!r}) is not an attention of this model: a {cfg.arch} model has {has}")
    for name, value, limit in (("layer", layer, cfg.layers), ("item", item, cfg.N)):
        if not 0 <= value < limit:
            raise ValueError(f"{name}={value} is out of range: this config has {limit} (0 to {limit - 1})")


# Weights one slim pass may draw, enough for the paper's big model's deepest map: the memory budget bounds
# a slim pass's memory, not its work.
MAX_SLIM_DRAWS = 300_000_000


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
        """Bytes held at most: one block's weights at a time, and the activations."""
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
    one = estimate(cfg.replace(N=1, layers=1))
    counts = param_counts(cfg)
    attention = (sum(latent_attention_params(cfg).values()) if cfg.attention == "mla"
                 else attention_params(E, cfg.nhead_kv * cfg.d_k, cfg.bias, cfg.nhead * cfg.d_k)
                 + 2 * cfg.d_k * cfg.qk_norm)
    ffn = ffn_params(E, cfg.d_ff, cfg.activation == "swiglu", cfg.bias)
    if cfg.moe:  # a layer with experts holds every expert's weights
        ffn = max(ffn, sum(moe_params(cfg).values()) // moe_layers(cfg))
    cross = cfg.arch == "encoder-decoder"  # the largest layer: a decoder layer of the paper's model
    # T5: a stack's first layer also holds the stack's relative bias table (relative_buckets, nhead)
    relative = cfg.relative_buckets * cfg.nhead if cfg.positional == "relative" else 0
    return SlimEstimate(
        tables=FLOAT_BYTES * (cfg.vocab_size * E + (cfg.max_len * E if cfg.positional == "learned" else 0)),
        layer=FLOAT_BYTES * ((1 + cross) * attention + ffn
                             + (2 + cross) * layernorm_params(E) + relative),
        maps=one.attention,
        rest=one.linear + one.transient,
        ids=INDEX_BYTES * cfg.N * (cfg.M + (cfg.M_target or 0)),
        draws=counts["total"] - counts["output layer"],
    )


def slim_bytes(cfg: TransformerConfig) -> int:
    """Bytes a slim pass holds at most, for any layer and kind (``slim_estimate(cfg).total``)."""
    return slim_estimate(cfg).total


def slim_attention(cfg: TransformerConfig, stack: str, block: str, layer: int, item: int, *,
                   budget_bytes: int = DEFAULT_BUDGET_BYTES) -> dict[str, Tensor]:
    """Run the slim pass; return what a trace would have recorded for this map, for item ``item``
    alone: '{stack}.{layer}.{block}.weights' (1, nhead, L_q, S) and the ids and masks its map reads:
    'src.tokens' (1, M) and 'src_key_padding_mask' (1, M) where there is an encoder, 'tgt.tokens'
    (1, M_target) and 'tgt_mask' where there is a decoder (a decoder-only model's sequence is its target).
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
    src, tgt = make_batch(cfg)  # (N, M), (N, M_target): the trace's own batch
    src, tgt = src[item:item + 1].clone(), tgt[item:item + 1].clone()  # (1, M), (1, M_target); the batch goes
    with torch.inference_mode():
        if cfg.arch == "decoder-only":  # its one sequence is the decoder's, under the causal mask
            rec = _decoder_only(model, cfg, src, layer)
        else:
            rec = _with_encoder(model, cfg, src, tgt, stack, layer)
    name = f"{stack}.{layer}.{block}.weights"
    return {name: rec[name], **{k: v for k, v in rec.items() if k.endswith(("tokens", "mask"))}}


def _decoder_only(model: Transformer, cfg: TransformerConfig, tokens: Tensor, layer: int) -> dict[str, Tensor]:
    """Decoder layers 0 .. ``layer`` of a single causal stack, one at a time; the last one recorded."""
    causal = generate_square_subsequent_mask(cfg.M)  # (M, M)
    rec: dict[str, Tensor] = {"tgt.tokens": tokens, "tgt_mask": causal}
    rope = model.rotation(cfg.M, "cpu")  # (M, d_k) or None
    with made_real(model, cfg.seed, [model.tgt_embed, model.positional]):
        y = model.embed(tokens, "tgt")  # (1, M, E)
    bias = None  # T5's: made from layer 0's table while it is real, read by every layer
    for i in range(layer + 1):
        with made_real(model, cfg.seed, [model.decoder[i]]):
            bias = _relative_bias(model.decoder[i], cfg.M, bias)  # (nhead, M, M) or None
            keep = rec if i == layer else None
            window = model.windows[i]  # a windowed layer reads under its band mask, as in the whole pass
            mask = sliding_window_mask(cfg.M, cfg.M, window) if window else causal  # (M, M)
            y = model.decoder[i](y, None, mask, None, None, None, keep, f"dec.{i}.", rope,
                                 position_bias=bias)  # (1, M, E)
    return rec


def _relative_bias(layer: nn.Module, L: int, bias: Tensor | None) -> Tensor | None:
    """T5's bias (nhead, L, L) from the stack's first layer, made real now, or the one it made already."""
    return layer.relative(L, L, 0, "cpu") if layer.relative is not None else bias


def _with_encoder(model: Transformer, cfg: TransformerConfig, src: Tensor, tgt: Tensor, stack: str,
                  layer: int) -> dict[str, Tensor]:
    """The encoder's layers one at a time (all of them for a decoder map: it reads the whole memory),
    then the decoder's up to ``layer``."""
    last = layer if stack == "enc" else cfg.layers - 1  # a decoder map needs the whole memory
    untied = stack == "dec" and not cfg.tie_embeddings  # the target side has a table of its own
    tables = [[model.src_embed, model.positional]] + ([[model.tgt_embed, model.positional]] if untied else [])
    padding = generate_key_padding_mask(src, PAD_ID)  # (1, M)
    rec: dict[str, Tensor] = {"src.tokens": src, "src_key_padding_mask": padding}
    if cfg.arch == "encoder-decoder":
        rec.update({"tgt.tokens": tgt, "tgt_mask": generate_square_subsequent_mask(cfg.M_target)})
    # Both sides' embeddings first; a tied table is drawn once for both.
    with made_real(model, cfg.seed, tables[0]):
        x = model.embed(src, "src")  # (1, M, E)
        y = model.embed(tgt, "tgt") if stack == "dec" and not untied else None  # (1, M_target, E)
    if untied:
        with made_real(model, cfg.seed, tables[1]):
            y = model.embed(tgt, "tgt")  # (1, M_target, E)
    rope = model.rotation(cfg.M, "cpu")  # (M, d_k) or None
    bias = None  # T5's: made from layer 0's table while it is real, read by every layer of the stack
    for i in range(last + 1):
        with made_real(model, cfg.seed, [model.encoder[i]]):
            bias = _relative_bias(model.encoder[i], cfg.M, bias)  # (nhead, M, M) or None
            keep = rec if stack == "enc" and i == layer else None
            x = model.encoder[i](x, None, padding, keep, f"enc.{i}.", rope, position_bias=bias)  # (1, M, E)
    if stack == "dec":
        x = x if model.encoder_norm is None else _final_norm(model, cfg, x)  # pre-norm: the memory is normalised
        rope = model.rotation(cfg.M_target, "cpu")  # (M_target, d_k) or None
        bias = None
        for i in range(layer + 1):
            with made_real(model, cfg.seed, [model.decoder[i]]):
                bias = _relative_bias(model.decoder[i], cfg.M_target, bias)  # (nhead, M_target, M_target) or None
                keep = rec if i == layer else None
                y = model.decoder[i](y, x, rec["tgt_mask"], None, None, padding, keep, f"dec.{i}.",
                                     rope, position_bias=bias)  # x is the memory
    return rec


def _final_norm(model: Transformer, cfg: TransformerConfig, x: Tensor) -> Tensor:
    """A pre-norm encoder's final norm, made real for the moment it takes."""
    with made_real(model, cfg.seed, [model.encoder_norm]):
        return model.encoder_norm(x)  # (1, M, E)
