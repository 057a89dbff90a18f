"""Step through the pass: each step's operands, combined here as its formula says (with torch's own ops, not the
model's code), give the row the trace recorded, to float32 rounding."""

import math

import pytest
import torch
import torch.nn.functional as F

from core.config import TransformerConfig
from core.model import build_causal_lm
from core.steps import plain_step, step_through
from core.tokens import text_config, tokenize
from core.train import ReversalSettings, trained_reversal
from transformers.models.t5.modeling_t5 import T5Attention

TEXT = "the cat sat on the mat\nthe dog ran"


def norm(s, step):
    """LayerNorm or RMSNorm over E, from the step's γ, β and ε."""
    gamma, eps = step.operand("γ"), step.operand("ε").item()
    if "mean(s²)" in step.formula:
        return gamma * s / torch.sqrt(s.pow(2).mean(-1, keepdim=True) + eps)
    mean, var = s.mean(-1, keepdim=True), s.var(-1, unbiased=False, keepdim=True)
    beta = step.operand("β") if any(o.name == "β" for o in step.operands) else 0
    return gamma * (s - mean) / torch.sqrt(var + eps) + beta


def opt(step, name):
    """An operand that only some configs have (a bias): 0 when absent."""
    return step.operand(name) if any(o.name == name for o in step.operands) else 0


def rotate(p, theta):
    half = p.shape[-1] // 2
    turned = torch.cat((-p[..., half:], p[..., :half]), dim=-1)
    return p * torch.cos(theta) + turned * torch.sin(theta)


def hidden(step, x):
    act = {"relu": torch.relu, "gelu": F.gelu}
    W1, b1 = step.operand("W1"), opt(step, "b1")
    if "silu" in step.formula:
        return F.silu(x @ W1 + b1) * (x @ step.operand("W3") + opt(step, "b3"))
    return act[step.formula.split("(")[0]](x @ W1 + b1)


def projection(step, which):
    name = next(o.name for o in step.operands if o.name.startswith(f"W^{which}"))
    p = step.operand("X") @ step.operand(name) + opt(step, name.replace("W^", "b^"))
    return rotate(p, step.operand("θ")) if "θ" in step.formula else p


def embedding(step):
    out = step.operand("W_emb")[step.operand("ids")]  # (N, M, E): rows of the matrix, by id
    if "√E" in step.formula:
        out = out * step.operand("√E")
    return out + opt(step, "PE")


def positions(step, cfg):
    pos = step.operand("pos")[:, None]  # (M, 1)
    if cfg.positional == "learned":
        return step.operand("P")[:cfg.M]
    if cfg.positional == "rope":
        i = torch.arange(cfg.d_k // 2, dtype=torch.float32)
        angles = pos / 10000 ** (2 * i / cfg.d_k)
        return torch.cat((angles, angles), dim=-1)
    i = torch.arange(cfg.E // 2, dtype=torch.float32)
    pe = torch.zeros(cfg.M, cfg.E)
    pe[:, 0::2] = torch.sin(pos / 10000 ** (2 * i / cfg.E))
    pe[:, 1::2] = torch.cos(pos / 10000 ** (2 * i / cfg.E))
    return pe


def independent(step, cfg):
    """The row, computed from the step's operands as its formula says."""
    key = step.key
    if key in ("token_embedding", "target_embedding"):
        return embedding(step)
    if key in ("positional_encoding", "rotation_table"):
        if cfg.positional == "learned":
            return step.operand("P")[:cfg.M]
        return positions(step, cfg)
    if key == "summed_embedding":
        return step.operand("token embedding") + opt(step, "PE")
    if key in ("qkv_one_head", "q_one_head"):
        return projection(step, "Q")
    if key == "kv_one_head":
        return projection(step, "K")
    if key == "relative_buckets":  # Hugging Face's own bucket function, on the step's offsets
        return T5Attention._relative_position_bucket(
            step.operand("offset"), bidirectional=cfg.arch != "decoder-only",
            num_buckets=int(step.operand("relative_buckets")), max_distance=int(step.operand("relative_max_distance")))
    if key == "relative_bias":
        return step.operand("T")[step.operand("bucket")].permute(2, 0, 1)  # (M, M, nhead) -> (nhead, M, M)
    if key == "attention_scores":
        Q, K, blocked = step.operand("Q"), step.operand("K"), step.operand("blocked")
        scores = Q @ K.transpose(-2, -1) / (step.operand("√d_k") if "√d_k" in step.formula else 1)
        scores = scores + (step.operand("bias") if "bias" in step.formula else 0)
        return torch.softmax(scores.masked_fill(blocked[:, None], float("-inf")), dim=-1)
    if key == "head_output":
        A, V = (o.value for o in step.operands)
        return A @ V
    if key == "concatenated_heads":
        heads = step.operand("heads")
        return torch.cat([heads[:, h] for h in range(heads.shape[1])], dim=-1)
    if key == "ffn_input":
        return norm(step.operand("x") + step.operand("a"), step)
    if key == "ffn_hidden":
        return hidden(step, step.operand("x"))
    if key == "ffn_output":
        h = step.operand("hidden") if any(o.name == "hidden" for o in step.operands) else hidden(step, step.operand("x"))
        return h @ step.operand("W2") + opt(step, "b2")
    if key in ("encoder_output", "final_output", "decoder_output"):
        s = step.operand("x") + opt(step, "a") + opt(step, "c") + step.operand("f")
        return norm(s, step)
    scale = step.operand("1/√E") if "1/√E" in step.formula else 1
    if key == "logits":
        return step.operand("Y") * scale @ step.operand("W_out") + opt(step, "b_out")
    if key == "output_probabilities":
        if any(o.name == "logits" for o in step.operands):
            return torch.softmax(step.operand("logits"), dim=-1)
        return torch.softmax(step.operand("Y") * scale @ step.operand("W_out") + opt(step, "b_out"), dim=-1)
    raise AssertionError(f"no independent computation for {key}")


CONFIGS = [
    dict(layers=1),
    dict(layers=1, norm_first=True, positional="learned", activation="gelu"),
    dict(layers=2, positional="rope", nhead=4, nhead_kv=2, bias=False, norm="rmsnorm"),
    dict(arch="decoder-only", layers=1),
    dict(arch="decoder-only", layers=1, positional="rope", norm="rmsnorm", norm_first=True, activation="swiglu",
         nhead=4, nhead_kv=1, bias=False),
    dict(arch="decoder-only", layers=2, positional="learned", activation="gelu"),
    dict(arch="encoder-only", layers=1, norm_first=True),
    dict(arch="encoder-only", layers=1, positional="none", activation="swiglu", nhead=4, nhead_kv=2),
    # T5's parts: relative buckets (8 of them, so far offsets share), no 1/sqrt(d_k), one matrix scaled on the way out
    dict(layers=1, positional="relative", relative_buckets=8, relative_max_distance=12, norm="rmsnorm",
         norm_first=True, bias=False, tie_embeddings=True, scale_scores=False, scale_embeddings=False),
    dict(arch="decoder-only", layers=1, positional="relative", relative_buckets=6, relative_max_distance=5,
         norm_first=True, scale_scores=False),
]


@pytest.mark.parametrize("fields", CONFIGS, ids=lambda f: "-".join(f"{k}={v}" for k, v in f.items()))
@pytest.mark.parametrize("head", [0, 1])
def test_every_steps_operands_combined_give_the_recorded_row(fields, head):
    text = tokenize(TEXT, "word")
    cfg = text_config(TransformerConfig(E=16, **{"nhead": 2, **fields}), text)
    t, steps = step_through(cfg, text=text, head=head)
    assert steps, "no steps"
    for step in steps:
        assert torch.equal(step.result, recorded(t, step, head)), step.key  # the row itself, at the chosen head
        with torch.no_grad():
            torch.testing.assert_close(independent(step, cfg), step.result, msg=lambda m, key=step.key: f"{key}: {m}")


def recorded(t, step, head):
    """The row's recorded tensor; for a per-head row, at the chosen head (the table shows head 0)."""
    r = t.row(step.key)
    if r.head is None:
        return t.value(step.key)
    kv_head = head // (t.config.nhead // t.config.nhead_kv)
    return t.tensors[r.hook][:, kv_head if step.key == "kv_one_head" else head]


def test_every_row_with_a_formula_has_a_step_in_every_family():
    text = tokenize(TEXT, "word")
    for arch, missing in (("encoder-decoder", {"input_tokens"}), ("decoder-only", {"input_tokens"}),
                          ("encoder-only", {"input_tokens"})):
        t, steps = step_through(text_config(TransformerConfig(arch=arch, layers=1), text), text=text)
        assert {r.key for r in t.rows} - {s.key for s in steps} == missing
        assert [s.index for s in steps] == sorted(s.index for s in steps)
    _, steps = step_through(text_config(TransformerConfig(layers=2), text), text=text)
    assert {"encoder_output", "decoder_output"}.isdisjoint(s.key for s in steps)  # deeper layers are not kept


def test_the_issues_four_examples_read_as_it_writes_them():
    text = tokenize("the cat sat on the mat", "word")
    _, steps = step_through(text_config(TransformerConfig(E=4, nhead=2, layers=1), text), text=text)
    by_key = {s.key: s for s in steps}
    assert by_key["token_embedding"].formula == "W_emb[ids] × √E"
    assert by_key["qkv_one_head"].formula == "X · W^Q_0 + b^Q_0"
    assert by_key["attention_scores"].formula.startswith("softmax over j of (Q Kᵀ / √d_k")
    assert by_key["concatenated_heads"].operand("heads").shape == (1, 2, 11, 2)
    assert by_key["token_embedding"].operand("√E").item() == 2.0
    assert math.isclose(by_key["attention_scores"].operand("√d_k").item(), math.sqrt(2), rel_tol=1e-6)


def test_a_plain_step_is_labelled_by_the_tokens_and_holds_the_same_numbers():
    text = tokenize(TEXT, "word")
    t, steps = step_through(text_config(TransformerConfig(layers=1, nhead=2), text), text=text, head=1)
    step = next(s for s in steps if s.key == "attention_scores")
    view = plain_step(t, step, item=1, head=1)
    assert view["formula"] == step.formula
    q = next(o for o in view["operands"] if o["name"] == "Q")
    assert q["row_labels"][:3] == ["the", " ", "dog"] and q["axes"] == ["N", "nhead", "M", "d_k"]
    torch.testing.assert_close(torch.tensor(q["values"]), step.operand("Q")[1, 1])
    result = view["result"]
    assert result["col_labels"][:3] == ["the", " ", "dog"]
    torch.testing.assert_close(torch.tensor(result["values"]), step.result[1, 1])
    number = next(o for o in view["operands"] if o["name"] == "√d_k")
    assert number["values"] == [[pytest.approx(math.sqrt(8))]]


def test_a_head_out_of_range_is_a_message():
    text = tokenize("ab", "char")
    with pytest.raises(ValueError, match="head=2 is out of range: nhead=2"):
        step_through(text_config(TransformerConfig(layers=1), text), text=text, head=2)


def test_the_steps_of_a_lab_model_hold_too():
    """A lab model's output layer has a bias the decoder-only family leaves out: its step shows it."""
    s = ReversalSettings(M=6, vocab_size=5, E=16, nhead=2, layers=1, d_ff=32)
    lm = build_causal_lm(seed=1, vocab_size=6, E=16, nhead=2, layers=1, d_ff=32, max_len=6, positional="learned")
    trained = trained_reversal(lm, s, "trained: a test")
    t, steps = step_through(trained.config, text=trained.batch, model=trained.model, weights=trained.weights)
    assert next(st for st in steps if st.key == "logits").formula == "Y · W_out + b_out"
    assert t.weights == "trained: a test"
    for step in steps:
        torch.testing.assert_close(independent(step, trained.config), step.result)
