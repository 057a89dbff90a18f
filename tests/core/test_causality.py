"""What the masks promise: no peeking at later target tokens; every source token reaches everywhere."""

import torch

from core import Transformer, TransformerConfig, generate_square_subsequent_mask

CFG = TransformerConfig(N=2, M=7, M_target=6, E=16, nhead=4, vocab_size=40, layers=2, seed=5)


def run(model, src, tgt):
    rec = {}
    model(src, tgt, tgt_mask=generate_square_subsequent_mask(tgt.shape[1]), rec=rec)
    return rec


@torch.no_grad()
def test_changing_target_token_j_leaves_earlier_decoder_outputs_unchanged():
    model = Transformer.from_config(CFG)
    gen = torch.Generator().manual_seed(0)
    src = torch.randint(0, 40, (2, 7), generator=gen)
    tgt = torch.randint(0, 40, (2, 6), generator=gen)
    base = run(model, src, tgt)["dec.out"]
    for j in range(6):
        changed = tgt.clone()
        changed[:, j] = (changed[:, j] + 1) % 40
        out = run(model, src, changed)["dec.out"]
        torch.testing.assert_close(out[:, :j], base[:, :j], rtol=0, atol=0)  # bit-identical before j
        assert not torch.allclose(out[:, j:], base[:, j:])  # j itself (and later) do change


@torch.no_grad()
def test_changing_one_source_token_changes_every_encoder_position():
    model = Transformer.from_config(CFG)
    src = torch.randint(0, 40, (2, 7), generator=torch.Generator().manual_seed(1))
    tgt = torch.randint(0, 40, (2, 6), generator=torch.Generator().manual_seed(2))
    base = run(model, src, tgt)["memory"]
    changed = src.clone()
    changed[:, 3] = (changed[:, 3] + 1) % 40
    memory = run(model, src=changed, tgt=tgt)["memory"]
    moved = (memory - base).abs().amax(dim=-1)  # (N, M)
    assert torch.all(moved > 1e-6)
