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


def test_the_readme_quotes_the_bytes_a_real_pass_at_gpt3_sizes_would_need():
    """The README's terminal row for GPT-3 sizes says how much a real pass would need: the figure must be
    core.memory.estimate's (the CLI's estimated_bytes, the explorer's 'a real pass would hold'). It said
    73.7 TiB, a figure the estimate no longer gives, where the app showed 29.3 TiB."""
    import re
    from pathlib import Path

    from core.config import GPT3_SIZES
    from core.memory import estimate, human_bytes

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    quoted = re.findall(r"nothing of the ([\d.]+ \w+) a real pass would need", readme)
    assert quoted == [human_bytes(estimate(GPT3_SIZES).total)]
