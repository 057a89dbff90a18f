"""Parameter counts against the paper's Table 3, and the memory estimate against a real pass."""

import torch

from core import PAPER_BASE, PAPER_BIG, TransformerConfig, Transformer, estimate, param_counts, trace
from core.memory import FLOAT_BYTES, every_layer
from core.model import generate_key_padding_mask, generate_square_subsequent_mask
from core.trace import PAD_ID, make_batch


def test_paper_base_is_about_65M_and_big_about_213M():
    """Table 3's figures against the formula, and the formula against the models themselves: each is built
    on the meta device (no memory for the weights) and its parameters counted one by one."""
    base, big = param_counts(PAPER_BASE)["total"], param_counts(PAPER_BIG)["total"]
    assert abs(base - 65e6) / 65e6 < 0.05, base
    assert abs(big - 213e6) / 213e6 < 0.05, big
    for cfg, total in ((PAPER_BASE, base), (PAPER_BIG, big)):
        model = Transformer.from_config(cfg, device="meta")
        assert sum(p.numel() for p in model.parameters()) == total, cfg
        assert trace(cfg, shape_only=True).params["total"] == total, cfg


def test_counts_on_the_live_model_equal_the_formulas():
    for cfg in [TransformerConfig(), TransformerConfig(E=12, nhead=3, layers=3, positional="learned", max_len=20),
                TransformerConfig(tie_embeddings=True, vocab_size=77)]:
        live = trace(cfg).params
        assert live == param_counts(cfg)
        model = Transformer.from_config(cfg)
        assert live["total"] == sum(p.numel() for p in model.parameters())


def test_attention_parameters_do_not_depend_on_nhead():
    counts = [param_counts(TransformerConfig(E=24, nhead=h))["encoder self-attention"] for h in (1, 2, 3, 8, 24)]
    assert len(set(counts)) == 1 and counts[0] == 2 * 4 * (24 * 24 + 24)


def test_estimate_counts_exactly_what_a_real_trace_keeps():
    for cfg in [TransformerConfig(), TransformerConfig(N=3, M=5, M_target=9, E=12, nhead=3, d_ff=7, layers=3,
                                                       vocab_size=33, positional="learned")]:
        t = trace(cfg)
        storages = {}
        for tensor in t.tensors.values():
            storage = tensor.untyped_storage()
            storages[storage.data_ptr()] = storage.nbytes()
        est = estimate(cfg)
        assert sum(storages.values()) == est.activations
        assert est.params == FLOAT_BYTES * t.params["total"]


def test_every_layer_counts_exactly_what_a_pass_recording_every_layer_holds():
    """The explorer's memory chart: a plain dict as the recorder keeps every layer's tensors."""
    for cfg in [TransformerConfig(), TransformerConfig(N=3, M=5, M_target=9, E=12, nhead=3, d_ff=7, layers=3,
                                                       vocab_size=33, positional="learned")]:
        model = Transformer.from_config(cfg)
        rec = {}
        with torch.inference_mode():
            src, tgt = make_batch(cfg)
            rec["tgt_mask"] = tgt_mask = generate_square_subsequent_mask(cfg.M_target)
            rec["padding"] = padding = generate_key_padding_mask(src, PAD_ID)
            model(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=padding, memory_key_padding_mask=padding,
                  rec=rec)
        storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in rec.values()}
        assert sum(storages.values()) == every_layer(cfg).activations
        # The trace drops the deeper layers' scores (and all but their weights): every layer keeps more.
        assert every_layer(cfg).attention - estimate(cfg).attention == FLOAT_BYTES * (cfg.layers - 1) * (
            cfg.N * cfg.nhead * (cfg.M ** 2 + cfg.M_target ** 2 + cfg.M_target * cfg.M))


def test_over_budget_configs_go_shape_only():
    cfg = TransformerConfig(N=4, M=64, E=64, nhead=4, vocab_size=1000)
    assert trace(cfg, budget_bytes=estimate(cfg).total - 1).shape_only
    assert not trace(cfg, budget_bytes=estimate(cfg).total).shape_only
    try:
        trace(cfg, budget_bytes=1, shape_only=False)
    except ValueError as exc:
        assert "budget" in str(exc)
    else:
        raise AssertionError("a forced real pass over the budget must be refused")


def test_the_memory_chart_parts_grow_as_their_names_say():
    """The chart calls one part 'activations growing like M' and the other the M^2 attention maps, and the
    explorer says doubling M doubles the one and quadruples the other. The causal mask, M_target^2 bytes,
    used to sit in the linear part, which then grew 2.4 times per doubling by M = 2048 at E = 16."""
    from core import DEFAULT

    for cfg in (DEFAULT, DEFAULT.replace(E=64, nhead=4, N=3, layers=3)):
        for m in (1, 8, 1024, 4096):
            one, two = (every_layer(cfg.replace(M=k, M_target=k, max_len=max(k, cfg.max_len))) for k in (m, 2 * m))
            assert two.linear == 2 * one.linear and two.attention == 4 * one.attention, (cfg, m)
