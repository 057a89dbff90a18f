"""The KV cache's memory against the tokens it holds, for MHA, GQA, MQA, MLA and a window on one chart, and each
kind's bytes a token (no streamlit, no torch)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import altair as alt
import pandas as pd

from core.memory import FLOAT_BYTES, FP16_BYTES, human_bytes
from render.palette import INK
from render.tables import FIT_WIDTH, described, fill_data, in_words
from render.words import counted

if TYPE_CHECKING:  # types only: core.cache_kinds is torch-free, but core's package imports torch
    from core.cache_kinds import KVCacheView, LatentSaving
    from core.config import TransformerConfig

KIND_COLOURS = {"MHA": "#d62728", "GQA": "#1f77b4", "MQA": "#2ca02c", "MLA": "#9467bd", "window": "#ff7f0e"}


@lru_cache(maxsize=None)
def _kv_template(ink: str, domain: tuple[str, ...], colours: tuple[str, ...], dashed: str) -> dict:
    """Built and validated by Altair once per theme and set of lines; only the rows change."""
    lines = alt.Chart(alt.NamedData(name="points")).mark_line().encode(
        x=alt.X("tokens:Q", scale=alt.Scale(type="log", base=2), title="tokens in the cache, M + G (log scale)"),
        y=alt.Y("bytes:Q", scale=alt.Scale(type="log"), title="cache bytes, float32 (log scale)",
                axis=alt.Axis(format="~s")),
        color=alt.Color("attention:N", title=None, scale=alt.Scale(domain=list(domain), range=list(colours)),
                        legend=alt.Legend(orient="bottom", columns=1, labelLimit=0)),
        # The window's line is dashed: it may lie on its full twin's until W, and the dash tells them apart.
        strokeDash=alt.condition(f"datum.attention == '{dashed}'", alt.value([6, 3]), alt.value([1, 0])),
        tooltip=["attention:N", alt.Tooltip("tokens:Q", format=","), "memory:N"],
    )
    # The chosen config: a ringed point on its own line, with its words beside it (not only in a tooltip).
    point = alt.Chart(alt.NamedData(name="chosen")).mark_point(size=140, filled=False, strokeWidth=2.5).encode(
        x="tokens:Q", y="bytes:Q", color=alt.value(ink), tooltip=["what:N"])
    label = alt.Chart(alt.NamedData(name="chosen")).mark_text(align="right", dx=-10, dy=-12).encode(
        x="tokens:Q", y="bytes:Q", text="label:N", color=alt.value(ink))
    return alt.layer(lines, point, label).properties(height=320, autosize=FIT_WIDTH).to_dict()


def kv_cache_spec(view: KVCacheView, theme: str = "light") -> dict:
    """Log-log lines of the cache's bytes against M + G, one per kind of attention, with the config's own ringed."""
    domain = tuple(k.label for k in view.kinds)
    colours = tuple(KIND_COLOURS[k.name] for k in view.kinds)
    window = view.kind("window")
    chosen = view.chosen
    what = f"yours: {chosen['attention']}, M + G = {chosen['tokens']:,}, {human_bytes(chosen['bytes'])}"
    rows = {"points": [{**p, "memory": human_bytes(p["bytes"])} for p in view.points],
            "chosen": [{**chosen, "what": what, "label": f"yours: {human_bytes(chosen['bytes'])}"}]}
    spec = fill_data(_kv_template(INK[theme]["label"], domain, colours, window.label.replace("'", "\\'")), rows)
    flat = ("flat from W on" if not window.global_every else
            "rising more slowly from W on, only its full layers still growing")
    return described(spec, f"Line chart, log-log, of the KV cache's bytes against the tokens it holds, for "
                           f"{in_words(domain)}: each full-attention line is straight, and caching fewer numbers a "
                           f"token lowers it by the same factor at every length; the window's line is dashed and "
                           f"{flat} (W = {window.window:,}). {what}.")


# Short headers, so that the numbers stay in sight beside the kinds' long names.
KIND_COLUMNS = ("numbers, one layer", "numbers, all layers", "bytes, float32", "bytes, bf16")


def kinds_frame(cfg: TransformerConfig, view: KVCacheView) -> pd.DataFrame:
    """Each kind's numbers a token (one layer's, and all layers'), its bytes a token in float32 and in bf16 (while
    no window is full), and its cache at M + G; the config's own kind first."""
    held = view.chosen["tokens"]
    kinds = sorted(view.kinds, key=lambda k: k.name != view.own)
    return pd.DataFrame({
        "attention": [("yours: " if k.name == view.own else "") + k.name_in_table for k in kinds],
        KIND_COLUMNS[0]: [k.numbers for k in kinds],
        KIND_COLUMNS[1]: [cfg.layers * k.numbers for k in kinds],
        KIND_COLUMNS[2]: [k.per_token(cfg, FLOAT_BYTES) for k in kinds],
        KIND_COLUMNS[3]: [k.per_token(cfg, FP16_BYTES) for k in kinds],
        f"cache at M + G = {held:,}": [human_bytes(k.bytes(cfg, held)) for k in kinds],
    })


def cache_formula(cfg: TransformerConfig, view: KVCacheView) -> str:
    """The cache's size as the formula, with the config's numbers in it."""
    tail = f" = {view.bytes:,} bytes ({human_bytes(view.bytes)}); in fp16 or bf16, {human_bytes(view.bytes_fp16)}"
    held = cfg.M + view.G
    if cfg.attention == "mla":
        return (f"layers · N · (M + G) · (kv_lora_rank + rope_head_dim) · 4 bytes = {cfg.layers} · {cfg.N} · "
                f"{held:,} · ({cfg.kv_lora_rank} + {cfg.rope_head_dim}) · 4{tail}")
    if cfg.window:
        windowed = sum(cfg.windowed(i) for i in range(cfg.layers))
        full = cfg.layers - windowed
        return (f"2 · N · nhead_kv · d_k · 4 bytes · (windowed layers · min(M + G, W) + full layers · (M + G))"
                f" = 2 · {cfg.N} · {cfg.nhead_kv} · {cfg.d_k} · 4 · ({windowed} · {min(held, cfg.window):,} + "
                f"{full} · {held:,}){tail}")
    return (f"2 · layers · N · nhead_kv · (M + G) · d_k · 4 bytes = 2 · {cfg.layers} · {cfg.N} · "
            f"{cfg.nhead_kv} · {held:,} · {cfg.d_k} · 4{tail}")


def latent_saving_words(s: LatentSaving) -> str:
    """MLA's cache a token against multi-head attention's, as the DeepSeek-V2 paper's table counts them."""
    return (f"Latent attention caches (kv_lora_rank + rope_head_dim) · layers = ({s.kv_lora_rank} + "
            f"{s.rope_head_dim}) · {s.layers} = **{s.mla:,} numbers a token**. Multi-head attention at these sizes, "
            f"counted as the DeepSeek-V2 paper's table counts it (2 · n_h · d_h · layers, with n_h = nhead = "
            f"{counted(s.nhead, 'head')} of d_h = {s.d_h}), would cache 2 · {s.nhead} · {s.d_h} · {s.layers} = "
            f"**{s.mha:,}**, about **{s.ratio:.{0 if s.ratio >= 10 else 1}f}×** as many.")


def per_token_words(cfg: TransformerConfig, view: KVCacheView) -> str:
    """The config's own bytes a token in bf16, as the formula with its numbers."""
    own = view.kind(view.own)
    bf16 = own.per_token(cfg, FP16_BYTES)
    if cfg.attention == "mla":
        return (f"In bf16 (2 bytes a number) each token adds layers · (kv_lora_rank + rope_head_dim) · 2 = "
                f"{cfg.layers} · {own.numbers} · 2 = **{bf16:,} bytes** to the cache of each sequence.")
    return (f"In bf16 (2 bytes a number) each token adds 2 · layers · nhead_kv · d_k · 2 = 2 · {cfg.layers} · "
            f"{cfg.nhead_kv} · {cfg.d_k} · 2 = **{bf16:,} bytes** to the cache of each sequence"
            + (f", until the window is full (W = {cfg.window:,})" if cfg.window else "") + ".")
