"""Numerical parity with torch.nn.Transformer, given the same weights."""

import pytest
import torch
from torch import nn

from core import Transformer, TransformerConfig, generate_key_padding_mask, generate_square_subsequent_mask


def copy_attention(dst: nn.MultiheadAttention, src) -> None:
    """nn.MultiheadAttention stacks W^Q, W^K and W^V as the rows of one in_proj_weight, in that order."""
    dst.in_proj_weight.copy_(torch.cat([src.W_q.weight, src.W_k.weight, src.W_v.weight]))  # 3 x (E, E) -> (3E, E)
    dst.in_proj_bias.copy_(torch.cat([src.W_q.bias, src.W_k.bias, src.W_v.bias]))  # (3E,)
    dst.out_proj.weight.copy_(src.W_o.weight)
    dst.out_proj.bias.copy_(src.W_o.bias)


def copy_ffn_and_norms(dst, src, norms: int) -> None:
    dst.linear1.load_state_dict(src.ffn.linear1.state_dict())
    dst.linear2.load_state_dict(src.ffn.linear2.state_dict())
    for i in range(1, norms + 1):
        getattr(dst, f"norm{i}").load_state_dict(getattr(src, f"norm{i}").state_dict())


@torch.no_grad()
def reference_from(ours: Transformer, cfg: TransformerConfig) -> nn.Transformer:
    """torch.nn.Transformer holding our weights. It adds a final LayerNorm to each stack, which the
    paper's post-norm model does not have; those two are replaced by identities."""
    ref = nn.Transformer(d_model=cfg.E, nhead=cfg.nhead, num_encoder_layers=cfg.layers,
                         num_decoder_layers=cfg.layers, dim_feedforward=cfg.d_ff, dropout=0.0, batch_first=True)
    ref.encoder.norm = nn.Identity()
    ref.decoder.norm = nn.Identity()
    for r, o in zip(ref.encoder.layers, ours.encoder):
        copy_attention(r.self_attn, o.self_attn)
        copy_ffn_and_norms(r, o, 2)
    for r, o in zip(ref.decoder.layers, ours.decoder):
        copy_attention(r.self_attn, o.self_attn)
        copy_attention(r.multihead_attn, o.cross_attn)
        copy_ffn_and_norms(r, o, 3)
    return ref


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("cfg", [
    TransformerConfig(N=3, M=9, M_target=6, E=16, nhead=4, vocab_size=50, layers=2, seed=1),
    TransformerConfig(N=2, M=5, E=12, nhead=3, d_ff=20, vocab_size=11, layers=3, positional="learned",
                      tie_embeddings=True, seed=2),
])
def test_logits_match_torch_transformer_with_causal_and_padding_masks(cfg):
    torch.manual_seed(0)
    ours = Transformer.from_config(cfg)
    ref = reference_from(ours, cfg)
    src = torch.randint(1, cfg.vocab_size, (cfg.N, cfg.M))  # (N, M)
    src[-1, -2:] = 0  # padding at the end of the last source sequence
    tgt = torch.randint(1, cfg.vocab_size, (cfg.N, cfg.M_target))  # (N, M_target)
    tgt[0, -1] = 0  # and one padded target position
    tgt_mask = generate_square_subsequent_mask(cfg.M_target)
    src_pad, tgt_pad = generate_key_padding_mask(src), generate_key_padding_mask(tgt)

    ours_logits = ours(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=src_pad,
                       tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
    # Grad mode stays on, so PyTorch takes its reference (non-fast-path) kernels.
    hidden = ref(ours.embed(src, "src"), ours.embed(tgt, "tgt"), tgt_mask=tgt_mask, src_key_padding_mask=src_pad,
                 tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
    ref_logits = ours.generator(hidden)  # (N, M_target, vocab_size)
    torch.testing.assert_close(ours_logits, ref_logits, atol=1e-5, rtol=1e-5)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_logits_match_in_a_pass_without_gradients_at_a_larger_size():
    """The way core.trace runs (inference mode), 2+2 layers at E = 256: the difference from PyTorch's
    kernels stays under 1e-5 through both stacks."""
    cfg = TransformerConfig(N=2, M=64, M_target=56, E=256, nhead=8, vocab_size=1000, layers=2, seed=3)
    torch.manual_seed(0)
    ours = Transformer.from_config(cfg)
    ref = reference_from(ours, cfg)
    src = torch.randint(1, cfg.vocab_size, (cfg.N, cfg.M))  # (N, M)
    src[-1, -5:] = 0
    tgt = torch.randint(1, cfg.vocab_size, (cfg.N, cfg.M_target))  # (N, M_target)
    tgt_mask, src_pad = generate_square_subsequent_mask(cfg.M_target), generate_key_padding_mask(src)
    with torch.inference_mode():
        ours_logits = ours(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=src_pad, memory_key_padding_mask=src_pad)
    hidden = ref(ours.embed(src, "src"), ours.embed(tgt, "tgt"), tgt_mask=tgt_mask, src_key_padding_mask=src_pad,
                 memory_key_padding_mask=src_pad)
    torch.testing.assert_close(ours_logits, ours.generator(hidden).detach(), atol=1e-5, rtol=1e-5)


def test_encoder_alone_matches_with_a_source_mask():
    cfg = TransformerConfig(N=2, M=6, E=8, nhead=2, vocab_size=20, layers=2)
    ours = Transformer.from_config(cfg)
    ref = reference_from(ours, cfg)
    src = torch.randint(0, 20, (2, 6))
    src_mask = generate_square_subsequent_mask(6)
    memory = ours.encode(src, src_mask=src_mask)
    torch.testing.assert_close(memory, ref.encoder(ours.embed(src, "src"), mask=src_mask), atol=1e-5, rtol=1e-5)


def test_float_masks_add_to_the_scores_like_pytorch():
    """A float mask is a bias added to the scores, finite values included (ALiBi-style biases, or a soft
    penalty); -inf entries block. Checked against nn.Transformer given the same masks, and the float
    form of the causal mask against the bool one."""
    cfg = TransformerConfig(N=2, M=5, M_target=4, E=8, nhead=2, vocab_size=20, layers=2)
    torch.manual_seed(0)
    ours = Transformer.from_config(cfg)
    ref = reference_from(ours, cfg)
    src, tgt = torch.randint(0, 20, (2, 5)), torch.randint(0, 20, (2, 4))  # (N, M), (N, M_target)
    bool_mask = generate_square_subsequent_mask(4)  # (M_target, M_target)
    float_mask = torch.zeros(4, 4).masked_fill(bool_mask, float("-inf"))
    torch.testing.assert_close(ours(src, tgt, tgt_mask=bool_mask), ours(src, tgt, tgt_mask=float_mask))

    soft_causal = torch.randn(4, 4).masked_fill(bool_mask, float("-inf"))  # finite below the diagonal
    src_bias = torch.randn(5, 5)  # (M, M), finite everywhere
    memory_bias = torch.randn(4, 5)  # (M_target, M)
    ours_logits = ours(src, tgt, src_mask=src_bias, tgt_mask=soft_causal, memory_mask=memory_bias)
    with torch.no_grad():
        hidden = ref(ours.embed(src, "src"), ours.embed(tgt, "tgt"), src_mask=src_bias, tgt_mask=soft_causal,
                     memory_mask=memory_bias)  # (N, M_target, E)
    torch.testing.assert_close(ours_logits, ours.generator(hidden), atol=1e-5, rtol=1e-5)
    plain = ours(src, tgt, tgt_mask=float_mask)
    assert not torch.allclose(ours_logits, plain, atol=1e-3)  # the finite biases did change the result


@pytest.mark.parametrize("E", [12, 7])
def test_the_embedding_step_is_the_papers(E):
    """What parity above takes as given, since both sides are fed ours.embed: token vectors scaled by
    sqrt(E) (section 3.4) plus PE(pos, 2i) = sin(pos / 10000^(2i/E)), PE(pos, 2i+1) = cos(pos /
    10000^(2i/E)) (section 3.5), written out here one number at a time. An odd E ends on a sine."""
    import math

    cfg = TransformerConfig(N=2, M=6, E=E, nhead=1, vocab_size=30)
    ours = Transformer.from_config(cfg)
    tokens = torch.randint(0, 30, (2, 6))  # (N, M)
    pe = torch.tensor([[math.sin(pos / 10000 ** (2 * (j // 2) / E)) if j % 2 == 0
                        else math.cos(pos / 10000 ** (2 * (j // 2) / E)) for j in range(E)]
                       for pos in range(6)])  # (M, E)
    expected = ours.src_embed.lookup.weight[tokens] * math.sqrt(E) + pe  # (N, M, E)
    torch.testing.assert_close(ours.embed(tokens, "src"), expected, atol=1e-5, rtol=1e-5)
