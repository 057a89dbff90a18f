"""Facts the pages state in words about the model, checked against core."""

import pytest

from core import DEFAULT
from core.memory import _floats
from core.views import layer_crossover


def _first(wins) -> int:
    m = 1
    while not wins(m):
        m += 1
    return m


@pytest.mark.parametrize("cfg", [DEFAULT, DEFAULT.replace(E=512, nhead=8), DEFAULT.replace(E=24, nhead=3, d_ff=50)])
def test_the_layer_crossover_is_an_encoder_and_a_decoder_layer_together(cfg):
    """The explorer's memory caption: (12E + d_ff) / (3 nhead) holds for an encoder layer and a decoder
    layer together, not for each layer; an encoder layer alone (one attention) crosses later and a
    decoder layer (two) sooner."""
    def floats(m):
        return _floats(cfg.replace(M=m, M_target=m))

    maps = 2 * cfg.N * cfg.nhead  # scores and weights, per attention, over M^2
    pair = _first(lambda m: 2 * floats(m).square > floats(m).enc_layer + floats(m).dec_layer)
    encoder = _first(lambda m: maps * m * m > floats(m).enc_layer)
    decoder = _first(lambda m: 2 * maps * m * m > floats(m).dec_layer)
    assert pair == layer_crossover(cfg)
    assert decoder < pair < encoder


def test_the_training_cli_help_gives_each_task_its_own_defaults():
    """`python -m core.train --help` gives 'reverse / lm' defaults for every size the two tasks set
    differently; the language model's E and d_ff are not the reversal task's."""
    from core.train import LMSettings, ReversalSettings, build_parser

    r, lm = ReversalSettings(), LMSettings()
    text = " ".join(build_parser().format_help().split())
    for flag, words, field in (("--E", "embedding size", "E"), ("--d-ff", "FFN hidden width", "d_ff"),
                               ("--nhead", "must divide E", "nhead"), ("--layers", "blocks", "layers"),
                               ("--lr", "Adam learning rate", "lr"), ("--N", "batch size", "N"),
                               ("--M", "sequence length", "M"), ("--steps", "training steps", "steps")):
        assert f"{words} (default {getattr(r, field)} / {getattr(lm, field)})" in text, flag


def test_the_cli_docs_quote_the_bytes_a_real_pass_at_gpt3_sizes_would_need():
    """docs/cli.md's sentence for GPT-3 sizes says how much a real pass would need: the figure must be
    core.memory.estimate's (the CLI's estimated_bytes, the explorer's 'a real pass would hold'). It said
    73.7 TiB, a figure the estimate no longer gives, where the app showed 29.3 TiB."""
    import re
    from pathlib import Path

    from tests.support.configs import ENC_DEC_AT_GPT3_WIDTHS
    from core.memory import estimate, human_bytes

    readme = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    quoted = re.findall(r"nothing of the ([\d.]+ \w+) a real pass would need", readme)
    assert quoted == [human_bytes(estimate(ENC_DEC_AT_GPT3_WIDTHS).total)]


def test_autograd_saves_one_map_of_the_two_the_memory_chart_counts_per_attention():
    """The explorer's memory caption: the chart counts each attention's scores and weights, while
    autograd saves only the weights (the softmax's gradient needs its output, the score product's
    needs q and k); so its attention term is half the chart's. Counted on the model's own layers,
    by the storages autograd packs for the backward pass."""
    import torch

    from core import DecoderLayer, EncoderLayer
    from core.memory import every_layer

    N, M, T, E, nhead = 2, 40, 24, 16, 2  # M, T and E all differ, so a map is told by its last two sizes
    maps = {(M, M), (T, T), (T, M)}

    def saved_maps(layer, *inputs):
        storages = {}

        def pack(t):
            if tuple(t.shape[-2:]) in maps and t.numel() == N * nhead * t.shape[-2] * t.shape[-1]:
                storages[t.untyped_storage().data_ptr()] = tuple(t.shape[-2:])
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            layer(*inputs).sum().backward()
        return sorted(storages.values())

    torch.manual_seed(0)
    src = torch.randn(N, M, E, requires_grad=True)  # (N, M, E)
    tgt = torch.randn(N, T, E, requires_grad=True)  # (N, M_target, E)
    assert saved_maps(EncoderLayer(E, nhead, 4 * E), src) == [(M, M)]
    assert saved_maps(DecoderLayer(E, nhead, 4 * E), tgt, src) == [(T, T), (T, M)]
    cfg = DEFAULT.replace(N=N, M=M, M_target=T, E=E, nhead=nhead, layers=1)
    f = _floats(cfg)
    assert f.square == N * nhead * (M * M + T * T + T * M)  # one map per attention ...
    assert every_layer(cfg).attention - f.causal_bytes == 4 * 2 * f.square  # ... counted twice, in float32


def test_the_glossary_is_right_about_dropout():
    """The explorer's glossary: nn.Transformer's dropout is 0.1 by default, and this model has none, so
    its pass is the same in training and evaluation mode."""
    import inspect

    import torch
    from torch import nn

    from core import Transformer

    assert inspect.signature(nn.Transformer).parameters["dropout"].default == 0.1
    model = Transformer.from_config(DEFAULT.replace(vocab_size=30, layers=1))
    assert not any(isinstance(m, nn.Dropout) for m in model.modules())
    src, tgt = torch.randint(2, 30, (2, 5)), torch.randint(2, 30, (2, 4))  # (N, M), (N, M_target)
    trained = model.train()(src, tgt)  # (N, M_target, vocab_size)
    assert trained.isfinite().all() and torch.equal(trained, model.eval()(src, tgt))


def test_the_readme_counts_the_rows_and_extras_a_trace_records():
    """The README's Explorer row counts the table's rows and the extras; a tensor added to either
    must not leave those words behind."""
    import re
    from pathlib import Path

    from core import trace

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| **Explorer** |"))
    t = trace(DEFAULT)
    assert re.search(rf"The {len(t.rows)}-row table", row) and re.search(rf"The {len(t.extras)} extras", row)


def test_the_cli_docs_and_help_give_each_fields_range_as_the_config_checks_it():
    """docs/cli.md's table of limits and ``--help`` quote core.config.RANGES, and the config refuses a value
    just outside each range and takes each end. The limits were named constants stated nowhere but in a
    comment, so a learner who asked for too much learnt the ceiling only from the error."""
    import re
    from pathlib import Path

    from core import TransformerConfig
    from core.cli import OneLineParser, add_config_arguments
    from core.config import MLA_FIELDS, RANGES

    readme = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    head, _, cells = re.search(r"^\| N \|.*\n\|[-| ]+\|\n\|.*\|$", readme, re.M).group(0).split("\n")
    quoted = {}
    for names, cell in zip(head.strip("| ").split(" | "), cells.strip("| ").split(" | ")):
        low, high = (int(n.replace(",", "")) for n in cell.split(" to "))
        quoted |= {name: (low, high) for name in names.split(", ")}
    assert quoted == RANGES

    parser = OneLineParser(prog="python -m core")
    add_config_arguments(parser)
    for name, (low, high) in RANGES.items():
        flag = parser._option_string_actions[f"--{name.replace('_', '-')}"]
        assert f"({low} to {high:,}; default" in flag.help, name
        for value, ok in ((low, True), (high, True), (low - 1, False), (high + 1, False)):
            fields = {"N": 1, "M": 1, "E": 1, "nhead": 1, "vocab_size": 2, name: value}
            if name in MLA_FIELDS:  # latent attention's widths, in the one model that reads them
                fields |= {"arch": "decoder-only", "positional": "rope", "attention": "mla"}
            if name == "nhead":
                fields["E"] = max(value, 1)  # a head count must divide E
            if ok:
                assert getattr(TransformerConfig(**fields), name) == value, (name, value)
            else:
                with pytest.raises(ValueError, match=rf"{name}={value}"):
                    TransformerConfig(**fields)
