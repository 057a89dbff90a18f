"""Sliding-window questions: the cache after the prompt, the band's open pairs and how far back a token reaches,
checked on the real model (a token outside the reach changes nothing at the last position), shown only with a
window."""

import pytest
import torch

from core import DEFAULT, trace
from core.config import MISTRAL_7B, TINY_LLAMA, TINY_MLA, TINY_MOE
from core.memory import kv_cache_bytes
from core.model import Transformer, generate_square_subsequent_mask
from quizzes import BY_ID, QUESTIONS, Context, check, questions_for
from quizzes.experiments.parts import MAX_REACH_SIDE, reach

from .conftest import PART_CONFIGS

TOPIC = "Sliding window"
WINDOWED = {n: c for n, c in PART_CONFIGS.items() if c.window}


def test_the_topic_has_its_questions():
    qs = [q for q in QUESTIONS if q.topic == TOPIC]
    assert {q.id for q in qs} == {"win-kept", "win-cache-numbers", "win-open-pairs", "win-earliest", "win-reach",
                                  "win-mistral"}
    assert sum(q.parametric for q in qs) == 5


@pytest.mark.parametrize("cfg", [DEFAULT, TINY_LLAMA, TINY_MOE, TINY_MLA], ids=lambda c: f"{c.arch}-E{c.E}-seed{c.seed}")
def test_no_window_question_without_a_window(cfg):
    assert not questions_for(TOPIC, cfg)


def _last_logits(model, ids, M):
    with torch.no_grad():
        return model(None, ids, tgt_mask=generate_square_subsequent_mask(M))[:, -1]


@pytest.mark.parametrize("cfg", list(WINDOWED.values()), ids=list(WINDOWED))
def test_the_answers_are_the_models(cfg):
    ctx = Context(cfg)
    real = trace(cfg, shape_only=False)
    kept = real.tensors["kv_cache"].shape[-2]
    assert BY_ID["win-kept"].expected(ctx) == kept == min(cfg.M, cfg.window)
    numbers = sum(t.numel() for k, t in real.tensors.items() if k in ("kv_cache", "kv_cache_global"))
    assert BY_ID["win-cache-numbers"].expected(ctx) == numbers == kv_cache_bytes(cfg, bytes_per_number=1)
    assert BY_ID["win-open-pairs"].expected(ctx) == int((~real.tensors["window_mask"]).sum()) == sum(
        min(i + 1, cfg.window) for i in range(cfg.M))
    windowed = sum(cfg.windowed(i) for i in range(cfg.layers))
    assert BY_ID["win-reach"].expected(ctx) == windowed * (cfg.window - 1)
    earliest = BY_ID["win-earliest"].expected(ctx)
    full = windowed < cfg.layers
    assert earliest == (0 if full else max(0, cfg.M - 1 - windowed * (cfg.window - 1)))


@pytest.mark.parametrize("name", ["window", "window, GPT"])
def test_a_token_before_the_earliest_changes_nothing_at_the_last_position(name):
    """The reach on the real model: change the token at the earliest position and the last position's logits move;
    change the one just before it and they stay exactly as they were."""
    cfg = WINDOWED[name]
    earliest = BY_ID["win-earliest"].expected(Context(cfg))
    assert earliest > 0
    torch.manual_seed(cfg.seed)
    model = Transformer.from_config(cfg).train(False)
    ids = torch.randint(2, cfg.vocab_size, (cfg.N, cfg.M), generator=torch.Generator().manual_seed(cfg.seed))
    base = _last_logits(model, ids, cfg.M)
    for position, moves in ((earliest, True), (earliest - 1, False)):
        other = ids.clone()
        other[:, position] = (other[:, position] + 1 - 2) % (cfg.vocab_size - 2) + 2
        assert torch.equal(_last_logits(model, other, cfg.M), base) is not moves, position


def test_reach_by_masks_and_by_the_bands_rule_agree():
    for M, layers, window in ((20, [True] * 3, 4), (30, [True, False, True], 5), (9, [True] * 5, 2),
                              (MAX_REACH_SIDE, [True] * 4, 50)):
        composed = reach(M, layers, window)
        ruled = 0 if not all(layers) else max(0, M - 1 - len(layers) * (window - 1))
        assert composed == ruled
    assert reach(MAX_REACH_SIDE + 100, [True] * 4, 50) == MAX_REACH_SIDE + 99 - 4 * 49


def test_mistral_cache_is_capped_at_the_window():
    q = BY_ID["win-mistral"]
    mib = q.expected(Context(WINDOWED["window"]))
    assert mib == 512 == 2 * 32 * 8 * 4096 * 128 * 2 / 2**20
    assert kv_cache_bytes(MISTRAL_7B.replace(N=1, M=16_384, window=0), bytes_per_number=2) / 2**30 == 2
    assert check(q, mib, "512") and not check(q, mib, "2048")


def test_a_reply_in_symbols_is_held_to_the_formula():
    cfg = WINDOWED["window, full every 2nd"]  # 2 windowed layers of 4 at window 5: 8 back
    q, ctx = BY_ID["win-reach"], Context(cfg)
    expected, formula = q.expected(ctx), q.formula(ctx)
    assert expected == 8
    assert check(q, expected, "windowed_layers*(window - 1)", ctx.symbols, formula)
    assert not check(q, expected, "layers*(window - 3)", ctx.symbols, formula)  # 8 here too, but not the rule
