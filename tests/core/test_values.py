"""The values a learner reads equal the live tensors of the pass, and carry the text's tokens as labels."""

import pytest
import torch

from core.config import ARCHS, TransformerConfig
from core.tensor_lists import MAX_VALUES
from core.tokens import text_config, tokenize
from core.trace import trace
from core.values import value_slice

TEXT = "the cat sat on the mat\nthe dog ran"


def text_trace(**fields):
    text = tokenize(TEXT, "word")
    return trace(text_config(TransformerConfig(layers=1, **fields), text), text=text)


def as_tensor(values, like):
    """JSON's null (a masked -inf) back to -inf."""
    def walk(v):
        return [walk(x) for x in v] if isinstance(v, list) else float("-inf") if v is None else v
    return torch.tensor(walk(values), dtype=like.dtype)


@pytest.mark.parametrize("fields", [dict(arch=a) for a in ARCHS] + [
    dict(arch="decoder-only", nhead_kv=1, positional="rope", activation="swiglu", norm="rmsnorm", norm_first=True)])
def test_every_small_tensors_values_equal_the_live_tensor(fields):
    t = text_trace(**fields)
    data = t.to_dict(values=True)
    shown = 0
    for row in data["rows"] + data["extras"]:
        live = t.value(row["key"])
        assert list(live.shape) == row["shape"]
        if live.numel() > MAX_VALUES:
            assert "values" not in row
            continue
        torch.testing.assert_close(as_tensor(row["values"], live), live, rtol=0, atol=0)
        shown += 1
    assert shown >= len(data["rows"])  # at these sizes every row is small


def test_a_large_tensor_has_no_values_in_json_but_a_slice_the_learner_picks():
    t = text_trace(E=64, nhead=4)
    row = next(r for r in t.to_dict(values=True)["extras"] if r["key"] == "ffn_hidden")
    assert row["numel"] > MAX_VALUES and "values" not in row
    values, rows, cols = value_slice(t, "ffn_hidden", item=1)
    live = t.value("ffn_hidden")  # (N, M, d_ff)
    assert torch.tensor(values).shape == (11, 16)
    torch.testing.assert_close(torch.tensor(values), live[1, :, :16])
    assert rows == ["the", " ", "dog", " ", "ran"] + ["<pad>"] * 6 and cols == [str(i) for i in range(16)]


def test_an_attention_slice_is_one_head_of_one_item_labelled_by_tokens_both_ways():
    t = text_trace(nhead=4)
    values, rows, cols = value_slice(t, "attention_scores", item=0, head=3)
    torch.testing.assert_close(torch.tensor(values), t.value("attention_scores")[0, 3])
    assert rows == cols == ["the", " ", "cat", " ", "sat", " ", "on", " ", "the", " ", "mat"]
    cross, rows, cols = value_slice(t, "cross_scores", item=1, head=2, rows=3, cols=4)
    torch.testing.assert_close(torch.tensor(cross), t.value("cross_scores")[1, 2, :3, :4])
    assert rows == ["<start>", "the", " "] and cols == ["the", " ", "dog", " "]


def test_a_per_head_row_shows_the_head_the_learner_picks():
    t = text_trace(nhead=2)
    values, _, cols = value_slice(t, "qkv_one_head", item=0, head=1)
    torch.testing.assert_close(torch.tensor(values), t.tensors["enc.0.self_attn.q"][0, 1])
    assert cols == [str(i) for i in range(8)]
    probs, _, vocab = value_slice(t, "output_probabilities", cols=100)
    assert vocab == ["<start>", " ", "cat", "dog", "mat", "on", "ran", "sat", "the"]
    torch.testing.assert_close(torch.tensor(probs), t.value("output_probabilities")[0])


def test_a_pick_out_of_range_is_a_message():
    t = text_trace(arch="decoder-only", nhead=2, nhead_kv=1)
    with pytest.raises(ValueError, match="head=1 is out of range for K, all K/V heads stacked: it has 1"):
        value_slice(t, "k_stacked", head=1)
    with pytest.raises(ValueError, match="item=2 is out of range"):
        value_slice(t, "token_embedding", item=2)


def test_without_a_text_the_labels_are_the_ids_and_padding():
    t = trace(TransformerConfig(N=2, M=8, layers=1))
    _, rows, _ = value_slice(t, "summed_embedding", item=1)
    ids = t.value("input_tokens")[1].tolist()
    assert rows == [str(i) for i in ids[:6]] + ["<pad>", "<pad>"]


def test_a_shape_only_pass_has_no_values():
    t = trace(TransformerConfig(), shape_only=True)
    assert all("values" not in r for r in t.to_dict(values=True)["rows"])
    with pytest.raises(ValueError, match="shape-only"):
        value_slice(t, "token_embedding")
