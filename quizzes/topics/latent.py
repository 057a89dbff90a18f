"""Multi-head latent attention (DeepSeek-V2 and V3): what a token caches, against the K and V its heads get back and
against grouped-query attention, which widths RoPE turns, and why the rotary key is one for all heads."""

from functools import partial

from core.config import DEEPSEEK_V3
from core.memory import kv_cache_per_token
from quizzes.questions import DECODER_ONLY, Context, Question, fixed, latent, row_shape

TOPIC = "Latent attention (MLA)"

_ask = partial(Question, topic=TOPIC, families=DECODER_ONLY, attention=("mla",), when=latent, evidence="latent_cache")


def _cache_per_layer(ctx: Context) -> int:
    """The stacked cache's last axis, (layers, N, M, kv_lora_rank + rope_head_dim): one token's numbers in one layer."""
    return ctx.trace.shapes["kv_cache"][-1]


def _made_back(ctx: Context) -> int:
    """Every head's K (d_qk wide) and V (v_head_dim wide) for one token, as the first layer makes them back."""
    shapes = ctx.trace.shapes
    k, v = shapes["dec.0.self_attn.k"], shapes["dec.0.self_attn.v"]  # (N, nhead, M, d_qk), (N, nhead, M, d_v)
    return k[1] * k[3] + v[1] * v[3]


_WIDTHS = (
    "Only the rope_head_dim part: each head's query has one, and the key's is one vector shared by every head; the "
    "nope_head_dim parts, the values and the latent carry no position.",
    "The whole query and key, nope_head_dim + rope_head_dim wide, as in Llama.",
    "The latent c_KV, so that the cache holds positions.",
    "Only the values, v_head_dim wide.",
)
_WHY_SHARED = (
    "A rotation by the key's position, put on a key made back from the latent, would sit between the latent and "
    "W_ukv: W_ukv's key part could no longer be folded into the query, and every cached key would have to be made "
    "back and turned at every step. So the position goes in a separate, small key that RoPE turns once and the cache keeps; "
    "one for all heads keeps that extra cache to rope_head_dim numbers a token.",
    "RoPE cannot turn more than rope_head_dim dimensions at once, so the heads must take turns with one key.",
    "Sharing the rotary key makes every head attend to the same positions, which is what DeepSeek wanted.",
)

QUESTIONS = (
    _ask(id="mla-cache-layer", kind="numeric", parametric=True, expression="kv_lora_rank + rope_head_dim",
         prompt="With latent attention (kv_lora_rank={kv_lora_rank}, rope_head_dim={rope_head_dim}, nhead={nhead}), "
                "how many numbers does one token leave in one layer's cache?",
         answer=_cache_per_layer,
         explanation="The cache keeps the latent c_KV (kv_lora_rank numbers) and the one rotary key all heads share "
                     "(rope_head_dim), whatever nhead is; every step makes each head's K and V back from them with "
                     "W_ukv. DeepSeek-V3: 512 + 64 = 576 a layer."),
    _ask(id="mla-cache-token", kind="numeric", parametric=True, expression="layers*(kv_lora_rank + rope_head_dim)",
         prompt="And over all layers={layers} layers: how many numbers does one token add to the cache?",
         answer=lambda ctx: ctx.trace.shapes["kv_cache"][0] * _cache_per_layer(ctx),
         explanation="(kv_lora_rank + rope_head_dim) a layer, times the layers: the stacked cache is (layers, N, M, "
                     "kv_lora_rank + rope_head_dim). At DeepSeek-V3's sizes, 576 · 61 = 35,136 numbers a token."),
    _ask(id="mla-made-back", kind="numeric", parametric=True,
         expression="nhead*(nope_head_dim + rope_head_dim + v_head_dim)",
         prompt="Each of the nhead={nhead} heads gets a key nope_head_dim + rope_head_dim = {nope_head_dim} + "
                "{rope_head_dim} wide and a value v_head_dim={v_head_dim} wide, made back from the latent. Caching "
                "those, as multi-head attention would, how many numbers would one token take in one layer?",
         answer=_made_back,
         explanation="nhead · (nope_head_dim + rope_head_dim + v_head_dim): every head's K and V. The latent and the "
                     "rotary key hold what they are made from in far fewer numbers; at DeepSeek-V3's sizes 128 · "
                     "(192 + 128) = 40,960 against 576, about 71 times fewer. (The DeepSeek-V2 paper counts "
                     "multi-head attention as 2 · nhead · 128, 32,768, which makes it about 57 times.)"),
    _ask(id="mla-gqa-groups", kind="numeric", parametric=True, tolerance=0.01,
         expression="(kv_lora_rank + rope_head_dim)/(2*v_head_dim)",
         prompt="Grouped-query attention caches 2 · nhead_kv · d_h numbers a token and layer. With heads of d_h = "
                "v_head_dim={v_head_dim}, how many K/V heads would cache as much as this latent attention does? "
                "(within 1%)",
         answer=lambda ctx: _cache_per_layer(ctx) / (2 * ctx.trace.shapes["dec.0.self_attn.v"][-1]),
         explanation="(kv_lora_rank + rope_head_dim) / (2 · d_h). DeepSeek-V2's paper sets kv_lora_rank = 4 d_h and "
                     "rope_head_dim = d_h / 2, so 4.5 d_h / 2 d_h = 2.25: the cache of GQA with about two K/V heads, "
                     "while every one of the nhead heads keeps keys and values of its own."),
    _ask(id="mla-v3-cache", kind="numeric", unit="count", sizes=DEEPSEEK_V3,
         prompt="DeepSeek-V3 has 61 layers, kv_lora_rank=512 and rope_head_dim=64. How many numbers does one token "
                "add to its KV cache?",
         answer=lambda ctx: kv_cache_per_token(DEEPSEEK_V3, bytes_per_number=1),
         explanation="(512 + 64) · 61 = 35,136 numbers, 70,272 bytes in bf16. Its 128 heads' K and V, made back "
                     "(128 · (192 + 128) = 40,960 a layer), would be 2,498,560; counted as the DeepSeek-V2 paper "
                     "counts multi-head attention, 2 · 128 · 128 · 61 = 1,998,848, about 57 times the latent's."),
    _ask(id="mla-rope-key-shape", kind="shape", parametric=True,
         prompt="What is the shape of the first layer's shared rotary key, for N={N} sequences of M={M} tokens and "
                "rope_head_dim={rope_head_dim}?",
         answer=row_shape("rope_key"),
         explanation="x W_dkv gives kv_lora_rank + rope_head_dim numbers a position; the last rope_head_dim, turned "
                     "by RoPE, are the rotary key: (N, M, rope_head_dim), with no head axis, because every head "
                     "reads the same one. It is cached beside the latent."),
    _ask(id="mla-rope-widths", kind="choice", choices=_WIDTHS, answer=fixed(0, _WIDTHS),
         prompt="In latent attention, which widths does RoPE turn?",
         explanation="Each query head is nope_head_dim plain numbers then rope_head_dim turned ones; each key is its "
                     "plain part made back from the latent, then the one rotary key, copied to every head. The "
                     "scores add the two dot products: what the tokens are (nope) and where they are (rope)."),
    _ask(id="mla-why-shared", kind="choice", choices=_WHY_SHARED, answer=fixed(0, _WHY_SHARED),
         prompt="Why does latent attention keep a separate rotary key, one for all heads, instead of turning the "
                "keys it makes back from the latent?",
         explanation="q · (W_uk c) = (W_ukᵀ q) · c: without positions, W_uk can be folded into the query and the "
                     "scores read the cached latent directly. RoPE's rotation depends on the key's position, so it "
                     "would sit between W_uk and c and break that folding (DeepSeek-V2, section 2.1.3). A separate "
                     "small key carries the position; shared by the heads, it costs rope_head_dim cached numbers a "
                     "token, not nhead times that."),
)
