"""The Explorer's KV-cache section for a decoder-only config: the cache's shape and formula after G new tokens, its
bytes against M + G beside MHA, GQA, MQA, MLA and a window at the same sizes, each kind's bytes a token, and the
live check against uncached passes.

Data flows one way: the run's config and G -> core.cache_kinds / core.kv_cache (plain values) -> render.kv_cache.
"""

from __future__ import annotations

import streamlit as st

from core import TransformerConfig
from core.cache_kinds import latent_saving
from core.kv_cache import check_refusal, room_for
from core.views import context_cost, kv_cache_view
from render.diagram import heads_words
from render.kv_cache import (KIND_COLUMNS, cache_formula, kinds_frame, kv_cache_spec, latent_saving_words,
                             per_token_words)
from render.words import counted
from ui.compute.traces import cached_cache_check
from ui.link.choices import KV_G_CHOICES
from ui.look.charts import show_chart
from ui.look.theme import theme
from ui.server.guard import guard
from ui.sidebar.config import forget_link_warnings

CONTEXT = 4096  # the context a served Llama-2 holds


def llama_70b_sizes(cfg: TransformerConfig) -> bool:
    """Whether the cache has Llama-2-70B's sizes: its layers, K/V heads and d_k (the cache's own factors)."""
    return cfg.attention == "mha" and not cfg.window and (cfg.layers, cfg.nhead_kv, cfg.d_k) == (80, 8, 128)


def shape_words(cfg: TransformerConfig, shape: tuple[int, ...]) -> str:
    """The stacked cache's shape, named axis by axis."""
    if cfg.attention == "mla":
        heads = ("its one head, which makes its" if cfg.nhead == 1 else
                 f"all {cfg.nhead} heads, which make their")
        return (f"**Cache shape:** (layers, N, M + G, kv_lora_rank + rope_head_dim) = `{shape}`: per layer, one "
                f"latent of {cfg.kv_lora_rank} and one rotary key of {cfg.rope_head_dim} a token, shared by "
                f"{heads} K and V back from them.")
    layers, _, N, heads, held, d_k = shape
    words = (f"**Cache shape:** (layers, 2, N, nhead_kv, M + G, d_k) = `{shape}`; per layer, K and V are each "
             f"(N, nhead_kv, M + G, d_k) = `{(N, heads, held, d_k)}`")
    if cfg.window:
        windowed = sum(cfg.windowed(i) for i in range(cfg.layers))
        words += (f" in a full layer; a windowed one ({windowed} of the {cfg.layers}) keeps only the last "
                  f"min(M + G, W) = {counted(min(held, cfg.window), 'position')}")
    return words + "."


def live_check(cfg: TransformerConfig, G: int, shape: tuple[int, ...]) -> None:
    """Generate G tokens with the cache and compare every step with one pass without it, where that is small."""
    refusal = check_refusal(cfg, G)
    if refusal is not None:
        st.info(f"Shape only: no live check here, as {refusal}.", icon=":material/straighten:")
        return
    check = cached_cache_check(cfg, G)
    held = cfg.M + G
    if cfg.windowed(0):  # the check reads layer 0's cache: a windowed layer keeps the last W positions
        shape = shape[:4] + (min(held, cfg.window),) + shape[5:]
    if check.agree and check.cache_shape == shape:
        # G = 0 is one step, the prompt's pass alone.
        steps = "at its one step" if G == 0 else f"at every one of the {G + 1} steps"
        st.success(f"Live check: {counted(G, 'token')} generated with the cache; {steps} its "
                   f"logits equal one pass over all M + G = {counted(held, 'token')} without a cache (largest "
                   f"difference {check.max_abs_diff:.1e}, within {check.tolerance:.0e}). The cache read "
                   f"off the model is {check.cache_shape}"
                   + (", layer 0's, a windowed layer's." if cfg.windowed(0) else ".") + (
                       f" Its learned positional table has max_len = {counted(cfg.max_len, 'row')}, one per "
                       f"position, so the check gives it {held} for the new token{'' if G == 1 else 's'}."
                       if room_for(cfg, G) != cfg
                       else ""), icon=":material/check_circle:")
    else:
        st.error(f"Live check failed: largest difference {check.max_abs_diff:.3e} (tolerance "
                 f"{check.tolerance:.0e}); cache {check.cache_shape}, expected {shape}.")


def kv_cache_section(cfg: TransformerConfig) -> None:
    """The whole section; the page calls it for a decoder-only config only."""
    st.header("KV cache")
    with st.container(key="kv_cache"), guard("The KV cache"):
        st.caption("Generating, a decoder-only model keeps every layer's K and V of the tokens so far, so each new "
                   "token computes only its own: the cache. It grows by one position a token.")
        G = st.select_slider("G — generated tokens", KV_G_CHOICES, key="x_kv_G", persist_state="session",
                             on_change=forget_link_warnings,
                             help="New tokens generated after the M-token prompt: the cache then holds M + G "
                                  "positions.")
        kv = kv_cache_view(cfg, G)
        st.markdown(shape_words(cfg, kv.shape))
        st.caption(cache_formula(cfg, kv) + ".")
        st.markdown(per_token_words(cfg, kv))
        if cfg.attention == "mla":
            st.markdown(latent_saving_words(latent_saving(cfg)))
        show_chart(kv_cache_spec(kv, theme()), width="stretch")
        window = kv.kind("window")
        plateau = (f"The dashed window line goes flat at W = {window.window:,}: a windowed layer keeps only the last "
                   "W positions, dropping one for each it takes" if not window.global_every else
                   f"The dashed window line bends at W = {window.window:,}: its windowed layers stop growing there, "
                   f"and only the full ones (one in {window.global_every}) keep growing")
        own = "your window" if cfg.window else ("Mistral-7B's window, every layer windowed, over your K/V heads")
        each = "the nhead = 1 head" if cfg.nhead == 1 else f"each of the nhead = {cfg.nhead} heads"
        heads = (f"Latent attention: {each} makes its K and V back from one shared latent"
                 if cfg.attention == "mla" else heads_words(cfg))
        st.caption(f"{heads}. Each line is the cache at this config's sizes with another way to attend; "
                   f"the ring marks yours at M + G tokens. Fewer numbers a token lower a line by the same factor at "
                   f"every length. {plateau} ({own}). MLA caches one latent and one rotary key a token, whatever "
                   "nhead is.")
        st.markdown("**A token's cache, kind by kind**: the numbers one more token adds, in one layer and in all "
                    "of them, and their bytes (until a window is full).")
        columns = {"attention": st.column_config.TextColumn("attention", width=240)} | {
            name: st.column_config.NumberColumn(name, format="localized", width=90) for name in KIND_COLUMNS}
        st.dataframe(kinds_frame(cfg, kv), hide_index=True, width="stretch", key="x_kv_kinds", column_config=columns,
                     row_height=52)
        live_check(cfg, G, kv.shape)
        if llama_70b_sizes(cfg):
            cost, mha = context_cost(cfg, CONTEXT), context_cost(cfg, CONTEXT, nhead_kv=cfg.nhead)
            st.markdown(f"**At Llama-2-70B's sizes, a {CONTEXT:,}-token context in fp16** costs 2 · {cfg.layers} "
                        f"layers · {cfg.nhead_kv} K/V heads · {cfg.d_k} (d_k) · {CONTEXT:,} tokens · 2 bytes = "
                        f"**{cost:,} bytes = {cost / 2**30:g} GiB** per sequence (N = 1); with {cfg.nhead} K/V "
                        f"heads, multi-head attention's, it would be {mha / 2**30:g} GiB.")
