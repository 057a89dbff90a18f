"""Shared contexts: two configs that differ in every field a parametric answer can read."""

import pytest

from core import TransformerConfig
from quizzes import Context

CONFIG_A = TransformerConfig(N=2, M=8, E=16, nhead=2, vocab_size=100)
CONFIG_B = TransformerConfig(N=3, M=6, M_target=5, E=24, nhead=4, vocab_size=50, layers=3, d_ff=40,
                             positional="learned")


@pytest.fixture(scope="session")
def ctx_a() -> Context:
    return Context(CONFIG_A)


@pytest.fixture(scope="session")
def ctx_b() -> Context:
    return Context(CONFIG_B)
