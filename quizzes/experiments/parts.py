"""The later parts, read off the learner's own model: a mixture of experts (what the router gives, the parameters
a token touches, how the tokens spread over the experts), latent attention's cache, a sliding window's cache and
reach, and the heads' width and qk_norm.

Shapes and counts come from a shape-only trace of the config, so any size costs a shape-only pass. Where the point
is a number only data gives (how many tokens chose each expert, each query's norm), a real pass runs at the
config's sizes, or at capped ones (``bounded``) that the note names.
"""

from __future__ import annotations

import math

import torch

from core.config import DEEPSEEK_V3, TransformerConfig
from core.experts import even_share
from core.memory import kv_cache_per_token
from core.model import MultiHeadAttention, Transformer, generate_square_subsequent_mask, sliding_window_mask
from core.trace import Trace, trace
from core.weights import seeded
from .base import MAX_WIDTH, Evidence, bounded, generator, largest_divisor_at_most
from .shapes import _shape_trace

CAPACITY_FACTOR = 1.25  # Switch Transformer's usual training value
MAX_REACH_SIDE = 512  # the longest sequence whose masks reach() composes; past it the band's rule counts
MAX_EXPERT_WIDTH = 32  # d_ff_expert in the routing probe: the counts are the router's, whatever the experts' width

# The part each experiment reads, by name: it runs only on a config that has it.
PARTS = {
    "routing": ("n_experts > 0", lambda c: c.moe),
    "latent_cache": ("attention='mla'", lambda c: c.attention == "mla"),
    "window_reach": ("window > 0", lambda c: c.window > 0),
    "head_parts": ("qk_norm or a head_dim other than E // nhead", lambda c: c.qk_norm or c.head_dim != c.E // c.nhead),
}


def needs(name: str, cfg: TransformerConfig) -> None:
    """A clear error for an experiment asked of a config without its part."""
    words, has = PARTS[name]
    if not has(cfg):
        raise ValueError(f"the {name} experiment reads a part this config has not; it needs {words}")


def stack(cfg: TransformerConfig) -> str:
    """The hook prefix of the one stack a decoder-only or encoder-only model has."""
    return "dec" if cfg.arch == "decoder-only" else "enc"


def moe_hook(cfg: TransformerConfig, name: str) -> str:
    """A hook of the first layer with experts (the trace keeps that layer's FFN)."""
    return f"{stack(cfg)}.{cfg.first_dense_layers}.ffn.{name}"


def capacity(tokens: int, top_k: int, n_experts: int, factor: float) -> int:
    """Rows an expert gets under a capacity factor: factor times the even share, rounded up."""
    return math.ceil(factor * tokens * top_k / n_experts)


ROUTING_LABELS = {
    "router_logits": "router logits, first layer with experts",
    "top_k_experts": "chosen experts, first layer with experts",
    "total": "parameters in all (the trace's count)",
    "active": "parameters one token's pass touches",
    "experts": "routed experts' parameters, every layer with experts",
    "shared_experts": "shared experts' parameters, every layer with experts",
    "router": "routers' parameters",
    "shared_output": "shared experts' output, first layer with experts",
    "slots": "token choices in one layer, N·M·top_k",
    "even_share": "even share per expert, rounded up",
    "capacity": f"rows per expert at capacity factor {CAPACITY_FACTOR}",
    "counts": "tokens each expert got in a real pass",
    "busiest": "most tokens any expert got",
    "dropped": f"token choices over capacity at factor {CAPACITY_FACTOR}",
}


def routing(cfg: TransformerConfig, shapes: Trace | None = None) -> Evidence:
    """A mixture of experts: the router's shapes and the parameter counts off a shape-only trace, and the tokens
    each expert got in a real pass (at capped sizes when the config's are large), against the even share and a
    capacity factor's cap."""
    needs("routing", cfg)
    t = _shape_trace(cfg, shapes)
    top_k_shape = t.shapes[moe_hook(cfg, "top_k_experts")]
    slots = math.prod(top_k_shape)
    probe, latent_note = cfg, ""
    if cfg.attention == "mla" and cfg.E > MAX_WIDTH:  # heads an even width at the capped E, for RoPE
        nhead = largest_divisor_at_most(MAX_WIDTH, min(cfg.nhead, MAX_WIDTH // 2))
        probe = cfg.replace(E=MAX_WIDTH, nhead=nhead, kv_lora_rank=None, q_lora_rank=0, rope_head_dim=None,
                            nope_head_dim=None, v_head_dim=None)
        latent_note = f"Run at E={MAX_WIDTH}, nhead={nhead}, with latent widths that follow them."
    small, note = bounded(probe, uses=("N", "M", "E", "layers", "vocab_size"))
    note = " ".join(n for n in (latent_note, note) if n)
    if small != cfg:  # the counts are the router's: narrow experts keep the pass cheap
        small = small.replace(d_ff_expert=min(small.d_ff_expert, MAX_EXPERT_WIDTH))
    live = trace(small, shape_only=False)
    counts = live.moe_counts()["tokens_per_expert"]
    cap = capacity(small.N * small.M, small.top_k, small.n_experts, CAPACITY_FACTOR)
    values = {
        "router_logits": t.shapes[moe_hook(cfg, "router_logits")], "top_k_experts": top_k_shape,
        "total": t.params["total"], "active": t.active_params, "experts": t.params["experts"],
        "shared_experts": t.params["shared experts"], "router": t.params["router"], "slots": slots,
        "even_share": even_share(cfg.N * cfg.M, cfg.top_k, cfg.n_experts),
        "capacity": capacity(cfg.N * cfg.M, cfg.top_k, cfg.n_experts, CAPACITY_FACTOR),
        "counts": counts, "busiest": max(counts), "dropped": sum(max(0, c - cap) for c in counts),
    }
    if cfg.n_shared_experts:
        values["shared_output"] = t.shapes[moe_hook(cfg, "shared.out")]
    share = small.N * small.M * small.top_k / small.n_experts
    records = [{"expert": e, "tokens": c, "even share": share} for e, c in enumerate(counts)]
    return Evidence("routing", "Routing: what the router gives, and the tokens each expert got", values, records,
                    {"kind": "bar", "x": "expert", "y": "tokens"},
                    " ".join(n for n in (
                        "Shapes and counts read off a shape-only trace of this config; the tokens per expert counted "
                        "in a real pass on seeded random ids.", note) if n), {k: ROUTING_LABELS[k] for k in values})


LATENT_LABELS = {
    "cache_per_layer": "numbers a token caches in one layer: latent and rotary key",
    "cache_per_token": "numbers a token caches over all layers",
    "made_back": "numbers of the K and V every head gets back, one token and layer",
    "gqa_groups": "K/V heads of width v_head_dim that would cache as much",
    "rope_key": "shared rotary key, first layer",
    "latent": "latent c_KV, first layer",
    "deepseek_v3": "DeepSeek-V3: numbers a token caches over its 61 layers",
    "deepseek_v3_mha": "DeepSeek-V3 as the V2 paper counts MHA, 2·nhead·128·layers",
}


def latent_cache(cfg: TransformerConfig, shapes: Trace | None = None) -> Evidence:
    """Latent attention's cache per token, read off the trace's stacked cache, against the K and V its heads are
    made back to (what multi-head attention would keep), and DeepSeek-V3's figures."""
    needs("latent_cache", cfg)
    t = _shape_trace(cfg, shapes)
    layers, _, _, per_layer = t.shapes["kv_cache"]  # (layers, N, M, kv_lora_rank + rope_head_dim)
    k, v = t.shapes["dec.0.self_attn.k"], t.shapes["dec.0.self_attn.v"]  # (N, nhead, M, d_qk), (N, nhead, M, d_v)
    made_back = k[1] * k[3] + v[1] * v[3]
    v3_mha = 2 * DEEPSEEK_V3.nhead * DEEPSEEK_V3.nope_head_dim * DEEPSEEK_V3.layers
    values = {"cache_per_layer": per_layer, "cache_per_token": layers * per_layer, "made_back": made_back,
              "gqa_groups": per_layer / (2 * v[3]), "rope_key": t.shapes["dec.0.self_attn.k_rope"],
              "latent": t.shapes["dec.0.self_attn.latent"],
              "deepseek_v3": kv_cache_per_token(DEEPSEEK_V3, bytes_per_number=1), "deepseek_v3_mha": v3_mha}
    records = [{"cache": "latent attention (this model)", "numbers a token, one layer": per_layer},
               {"cache": "its heads' K and V, made back", "numbers a token, one layer": made_back},
               {"cache": "one K/V head of v_head_dim (MQA)", "numbers a token, one layer": 2 * v[3]}]
    return Evidence("latent_cache", "Latent attention's cache against its heads' K and V", values, records,
                    {"kind": "bar", "x": "cache", "y": "numbers a token, one layer", "horizontal": "true"},
                    "Read off a shape-only trace of this config: the cache keeps the latent and the rotary key; K and "
                    "V are made back from them at every step.", LATENT_LABELS)


def reach(M: int, layers: list[bool], window: int) -> int:
    """The earliest position whose token reaches the last one (M − 1) through ``layers`` (True: windowed), on the
    model's own masks composed layer by layer; past MAX_REACH_SIDE positions, by the band's rule (each windowed
    layer reaches window − 1 further back, a full layer to the start)."""
    if M > MAX_REACH_SIDE:
        back = 0
        for is_windowed in layers:
            if not is_windowed:
                return 0
            back += window - 1
        return max(0, M - 1 - back)
    causal = ~generate_square_subsequent_mask(M)  # (M, M): True where a query sees a key
    band = ~sliding_window_mask(M, M, window)  # (M, M)
    seen = torch.eye(M, dtype=torch.bool)  # (M, M): which input positions each position holds so far
    for is_windowed in layers:
        step = (band if is_windowed else causal).float()  # (M, M)
        seen = (step @ seen.float()) > 0  # (M, M): a query gathers what each key it sees holds
    return int(seen[M - 1].nonzero()[0])


WINDOW_LABELS = {
    "kept": "positions a windowed layer's cache keeps after the prompt",
    "cache_numbers": "numbers in the whole cache after the prompt",
    "full_numbers": "numbers the cache would hold with no window",
    "open_pairs": "(query, key) pairs a windowed layer's mask leaves open",
    "causal_pairs": "(query, key) pairs the causal mask alone leaves open",
    "earliest": "earliest position that reaches the last one through every layer",
    "per_layer_reach": "positions back one windowed layer reaches, window − 1",
}


def window_reach(cfg: TransformerConfig, shapes: Trace | None = None) -> Evidence:
    """A sliding window: the cache the trace keeps, the pairs its band mask leaves open, and how far back the last
    position's information comes from once the layers are stacked."""
    needs("window_reach", cfg)
    t = _shape_trace(cfg, shapes)
    windowed = [cfg.windowed(i) for i in range(cfg.layers)]
    cache = math.prod(t.shapes["kv_cache"]) + (math.prod(t.shapes["kv_cache_global"])
                                               if "kv_cache_global" in t.shapes else 0)
    full = 2 * cfg.layers * cfg.N * cfg.nhead_kv * cfg.M * cfg.d_k
    W, M = cfg.window, cfg.M
    open_pairs = int((~sliding_window_mask(M, M, W)).sum()) if M <= MAX_REACH_SIDE else sum(
        min(i + 1, W) for i in range(M))
    values = {"kept": t.shapes["kv_cache"][4], "cache_numbers": cache, "full_numbers": full,
              "open_pairs": open_pairs, "causal_pairs": M * (M + 1) // 2, "earliest": reach(M, windowed, W),
              "per_layer_reach": W - 1}
    records = [{"layers stacked": n, "earliest position reached": reach(M, windowed[:n], W)}
               for n in range(1, cfg.layers + 1)]
    return Evidence("window_reach", "A sliding window: its cache, its mask and how far back a token reaches",
                    values, records, {"kind": "line", "x": "layers stacked", "y": "earliest position reached"},
                    f"The cache read off a shape-only trace of this config; the reach composed from the model's own "
                    f"masks for the last position, {M - 1}, layer by layer.", WINDOW_LABELS)


HEAD_LABELS = {
    "concat": "the heads concatenated, first layer",
    "q_stacked": "every head's queries, first layer",
    "qk_norm_params": "parameters of every q and k norm, counted on the model",
    "q_rms_spread": "largest |RMS − 1| of a head's query, qk_norm on",
    "q_rms_spread_off": "largest |RMS − 1| of a head's query, qk_norm off",
}


def head_parts(cfg: TransformerConfig, shapes: Trace | None = None) -> Evidence:
    """The heads' width and qk_norm: the concatenation off a shape-only trace, the norms' parameters counted on the
    model built on the meta device, and each query head's root mean square in one attention block of these widths
    (capped E), with qk_norm and without."""
    needs("head_parts", cfg)
    t = _shape_trace(cfg, shapes)
    attn = f"{stack(cfg)}.0.self_attn."
    model = Transformer.from_config(cfg, device="meta")
    norms = sum(p.numel() for name, p in model.named_parameters() if name.split(".")[-2] in ("q_norm", "k_norm"))
    small, note = bounded(cfg, uses=("N", "M", "E"))
    spreads = {}
    for on in (True, False):
        block = seeded(MultiHeadAttention, small.E, small.nhead, seed=cfg.seed, nhead_kv=small.nhead_kv,
                       bias=small.bias, head_dim=cfg.head_dim, qk_norm=on)
        x = torch.randn(small.N, small.M, small.E, generator=generator(cfg.seed))  # (N, M, E)
        rec: dict = {}
        with torch.no_grad():
            block(x, x, rec=rec)
        rms = rec["q"].pow(2).mean(-1).sqrt()  # (N, nhead, M): each head's query, over its d_k numbers
        spreads[on] = float((rms - 1).abs().max())
    values = {"concat": t.shapes[attn + "concat"], "q_stacked": t.shapes[attn + "q"],
              "qk_norm_params": norms, "q_rms_spread": spreads[True], "q_rms_spread_off": spreads[False]}
    records = [{"queries": "qk_norm on", "largest |RMS − 1|": spreads[True]},
               {"queries": "qk_norm off", "largest |RMS − 1|": spreads[False]}]
    return Evidence("head_parts", "The heads' width, and what qk_norm does to each query", values, records,
                    {"kind": "bar", "x": "queries", "y": "largest |RMS − 1|"},
                    " ".join(n for n in ("Shapes read off a shape-only trace of this config; the norms counted on "
                                         "the model; the queries of one attention block on seeded random input.",
                                         note) if n), HEAD_LABELS)
