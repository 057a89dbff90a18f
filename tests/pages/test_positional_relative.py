"""The positional page for a T5-style model (relative positions), opened by a link: its first tab draws each stack's
bucket of every (query, key) pair from the model's own bucket function, at the sliders' extremes too."""

from __future__ import annotations

import json

import pytest

from core import TransformerConfig, trace
from core.views import MAX_POSITIONS
from tests.support.apptest import open_page, running

T5_LINK = {"N": "2", "M": "8", "E": "16", "nhead": "2", "layers": "2", "vocab_size": "30", "positional": "relative",
           "norm": "rmsnorm", "norm_first": "true", "bias": "false", "tie_embeddings": "true"}


def heatmaps(tab) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in tab.get("vega_lite_chart")]


def cells_of(spec: dict) -> dict[tuple[int, int], int]:
    """A bucket heatmap's cells: (query, key) -> bucket."""
    values = spec["data"]["values"] if "data" in spec else spec["layer"][0]["data"]["values"]
    return {(c["query"], c["key"]): c["bucket"] for c in values}


def test_a_relative_model_opens_on_its_buckets():
    at = open_page("positional", T5_LINK)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    cfg = running(at)
    assert cfg.positional == "relative" and cfg.norm == "rmsnorm" and not cfg.bias
    assert [tab.label for tab in at.tabs] == ["Relative buckets", "M × E table", "Dimensions as curves",
                                              "Sinusoidal vs learned"]
    tab = at.tabs[0]
    assert [h.value for h in tab.subheader] == ["Encoder: bidirectional", "Decoder: causal"]
    specs = heatmaps(tab)
    assert [s["description"].split(":")[0] for s in specs] == [
        "Heatmap of the encoder's relative position buckets (bidirectional)",
        "Heatmap of the decoder's relative position buckets (causal)"]
    t = trace(cfg)
    for spec, hook in zip(specs, ("enc.relative_buckets", "dec.relative_buckets")):
        drawn = cells_of(spec)
        live = t.tensors[hook]  # (M, M): the live pass's own buckets
        assert drawn == {(i, j): int(live[i, j]) for i in range(cfg.M) for j in range(cfg.M)}
    words = " ".join(c.value for c in tab.caption)
    assert (f"this model's positional parameters number {2 * 32 * 2:,} of its {t.params['total']:,}" in words)
    assert "**relative** positions, as T5 does" in at.caption[0].value
    assert "T5's relative bias is added to the scores instead" in at.tabs[1].info[0].value


@pytest.mark.parametrize("sizes", [
    {"M": "1", "E": "1", "nhead": "1", "layers": "1", "N": "1", "vocab_size": "2"},
    {"M": "4096", "E": "2048", "nhead": "128", "layers": "96", "N": "64", "vocab_size": "50257"},
    {"arch": "decoder-only", "M": "4096", "E": "8", "nhead": "8"},
    {"arch": "encoder-only", "M": "2", "E": "4", "nhead": "4"},
], ids=["smallest", "largest", "decoder-only-long", "encoder-only-short"])
def test_the_bucket_tab_renders_at_the_sliders_extremes(sizes):
    at = open_page("positional", {**T5_LINK, **sizes})
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    cfg: TransformerConfig = running(at)
    assert cfg.positional == "relative"
    tab = at.tabs[0]
    assert tab.label == "Relative buckets"
    specs = heatmaps(tab)
    stacks = {"encoder-decoder": 2, "decoder-only": 1, "encoder-only": 1}[cfg.arch]
    assert len(specs) == stacks
    shown = min(cfg.M, MAX_POSITIONS)
    positions = "position" if shown == 1 else "positions"
    for spec in specs:
        assert f"{shown} query {positions} down, {shown} key {positions} across" in spec["description"]
    if cfg.M > MAX_POSITIONS:
        assert f"Drawn: the first {MAX_POSITIONS} of {cfg.M} positions" in " ".join(c.value for c in tab.caption)


def test_the_builders_draw_the_live_buckets_of_tiny_t5():
    """At T5's own tiny config (8 buckets reaching 16 positions) far offsets share a bucket: the table of offsets
    says which, and the heatmap's cells are the live pass's buckets."""
    from core.config import TINY_T5
    from core.views import relative_view
    from render.relative import bucket_offsets_frame, relative_buckets_frame, relative_buckets_spec

    t = trace(TINY_T5)
    encoder, decoder = relative_view(TINY_T5)
    for v, hook in ((encoder, "enc.relative_buckets"), (decoder, "dec.relative_buckets")):
        spec = relative_buckets_spec(v, TINY_T5.relative_buckets)
        assert cells_of(spec) == {(i, j): int(t.tensors[hook][i, j]) for i in range(8) for j in range(8)}
        assert relative_buckets_frame(v).values.tolist() == t.tensors[hook].tolist()
    offsets = bucket_offsets_frame(encoder)
    assert offsets.loc[2].tolist() == ["-5 to -2", 4] and offsets.loc[6].tolist() == ["2 to 5", 4]
    assert offsets.loc[0].tolist() == ["0", 1] and 4 not in offsets.index  # 'after, distance 0' is never used
    assert bucket_offsets_frame(decoder).loc[0].tolist() == ["0 to 7", 8]  # later keys, masked, share bucket 0


@pytest.mark.parametrize("page", ["explorer", "attention", "quiz"])
def test_the_other_pages_open_a_relative_model(page):
    """The explorer's rows and diagram, the attention maps and the quiz take a relative-position model too."""
    at = open_page(page, T5_LINK)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert running(at).positional == "relative"
