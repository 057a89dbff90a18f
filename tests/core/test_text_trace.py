"""A pass over a learner's own text: the rows' shapes are the text's, the ids are its ids, padding is masked."""

import pytest
import torch

from core.config import ARCHS, TransformerConfig
from core.model import Transformer
from core.tokens import START_ID, split, text_config, tokenize
from core.trace import trace

TEXT = "the cat sat on the mat\na dog"


@pytest.mark.parametrize("arch", ARCHS)
def test_a_text_trace_has_the_texts_shapes_in_every_family(arch):
    text = tokenize(TEXT, "word")
    cfg = text_config(TransformerConfig(arch=arch, E=8, nhead=2, layers=1), text)
    t = trace(cfg, text=text)
    N, M, V = 2, 11, text.vocab_size
    assert (cfg.N, cfg.M, cfg.vocab_size) == (N, M, V) == (2, 11, 9)
    assert t.row("input_tokens").shape == (N, M)
    assert t.rows[-1].shape == (N, M, V)  # encoder-decoder: M_target = M, the text shifted right
    ids = t.value("input_tokens")
    assert ids[0].tolist() == text.ids(text.source[0])
    assert ids[1, :3].tolist() == text.ids(text.source[1])
    assert torch.isfinite(t.value("output_probabilities")).all()


def test_the_decoder_reads_the_text_shifted_right_behind_the_start_token():
    text = tokenize("abc", "char", target_text="xyzw")
    cfg = text_config(TransformerConfig(E=8, nhead=2, layers=1), text)
    t = trace(cfg, text=text)
    assert (cfg.M, cfg.M_target) == (3, 4)
    labels = text.labels()
    assert [labels[i] for i in t.value("target_tokens")[0].tolist()] == ["<start>", "x", "y", "z"]
    assert t.value("target_tokens")[0, 0].item() == START_ID


def test_padding_is_masked_by_the_lines_lengths_not_by_an_id():
    text = tokenize("abcd\nab", "char")
    cfg = text_config(TransformerConfig(arch="encoder-only", E=8, nhead=2, layers=1), text)
    t = trace(cfg, text=text)
    assert t.value("key_padding_mask").tolist() == [[False] * 4, [False, False, True, True]]
    weights = t.value("attention_scores")  # (N, nhead, M, M)
    assert (weights[1, :, :, 2:] == 0).all() and (weights[0] > 0).all()


def test_the_config_must_have_the_texts_sizes():
    text = tokenize("hello there", "word")
    with pytest.raises(ValueError, match="M=8 \\(the text has M=3\\)"):
        trace(TransformerConfig(), text=text)


def test_a_learned_table_is_made_just_long_enough():
    text = tokenize("abcdefghij", "char")
    cfg = text_config(TransformerConfig(positional="learned", M=4, E=8, nhead=2), text)
    assert cfg.max_len == 10
    assert trace(cfg, text=text).row("positional_encoding").shape == (10, 8)


def test_a_given_model_is_the_one_that_runs():
    text = tokenize("to be or not", "word")
    cfg = text_config(TransformerConfig(arch="decoder-only", E=8, nhead=2, layers=1), text)
    model = Transformer.from_config(cfg.replace(seed=7))
    t = trace(cfg, text=text, model=model, weights="trained: a test")
    with torch.no_grad():
        logits = model(None, t.value("input_tokens"), tgt_mask=t.value("causal_mask"))
    torch.testing.assert_close(t.value("logits"), logits)
    assert t.weights == "trained: a test" and t.to_dict()["weights"] == "trained: a test"
    assert trace(cfg, text=text).weights.startswith("untrained")
    with pytest.raises(ValueError, match="E=8"):
        trace(cfg.replace(E=16), text=text, model=model)


def test_json_carries_the_ids_and_the_tokens():
    text = tokenize("the cat sat on the mat", "word")
    t = trace(text_config(TransformerConfig(E=8, nhead=2, layers=1), text), text=text)
    data = t.to_dict()
    assert data["rows"][0]["values"] == [text.ids(text.source[0])]
    assert data["tokens"] == [list(text.source[0])]
    assert "values" not in data["rows"][1]  # values only when asked for
    assert "values" in t.to_dict(values=True)["rows"][1]


HOSTILE = [
    "<script>alert('x')</script><img src=x onerror=alert(1)>",
    "a\x00b\x1b[2J\x07\x08c\rd",
    "\u202eevil\u202c \u2067rtl\u2069 שלום עולם مرحبا بالعالم",
    "😀👩‍👩‍👧🏳️‍🌈 ok",
    "x" * 10_000,
    "word " * 2_000,
    "\n".join(["line"] * 100),
]


@pytest.mark.parametrize("level", ["word", "char"])
@pytest.mark.parametrize("arch", ARCHS)
def test_hostile_text_traces_in_every_family(arch, level):
    for hostile in HOSTILE:
        text = tokenize(hostile, level)
        assert text.M <= 512 and text.N <= 64
        cfg = text_config(TransformerConfig(arch=arch, E=8, nhead=2, layers=1), text)
        t = trace(cfg, text=text)
        assert t.row("input_tokens").shape == (text.N, text.M)
        assert torch.isfinite(t.value("output_probabilities")).all()
        lines = [line for line in hostile.split("\n") if line]
        assert text.cut == (len(lines) > 64 or any(len(split(line, level)) > 512 for line in lines))


def test_a_shape_only_text_trace_still_carries_the_ids():
    text = tokenize("ab\nabc", "char")
    t = trace(text_config(TransformerConfig(E=8, nhead=2, layers=1), text), text=text, shape_only=True)
    assert t.shape_only and t.to_dict()["rows"][0]["values"] == [[1, 2, 0], [1, 2, 3]]
    assert "values" not in t.to_dict(values=True)["rows"][1]
