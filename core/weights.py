"""Seeded starting weights, drawn block by block from generators of their own.

Why not PyTorch's default initialisation: it draws from the one global generator that every
session of the app shares, so two sessions tracing at once would take each other's numbers. Here
each top-level block of a model (the token table, the positional table, each encoder and each
decoder layer, the output layer) draws from its own ``torch.Generator``, seeded with (seed, the
block's index). The weights then depend only on the seed and the model's layout, and a block built
on its own (core.slim builds a big model one layer at a time) gets exactly the values it has in the
whole model. The spreads are PyTorch's own for nn.Linear (uniform, bound 1/sqrt(in_features)) and
nn.LayerNorm (gain 1, bias 0); the token table gets standard deviation 1/sqrt(E), so that a token
vector, which the paper multiplies by sqrt(E), starts at about unit size, as a position's does.
"""

from __future__ import annotations

import math
from typing import Callable, TypeVar

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from .experts import StackedExperts

M = TypeVar("M", bound=nn.Module)

# The nn.init functions PyTorch's layers call from reset_parameters as they are made.
DEFAULT_FILLS = frozenset({nn.init.kaiming_uniform_, nn.init.uniform_, nn.init.normal_, nn.init.ones_,
                           nn.init.zeros_})


def blocks(model: nn.Module) -> list[nn.Module]:
    """The model's top-level blocks in order, the layers of a stack one by one: each draws from its own generator."""
    out: list[nn.Module] = []
    for child in model.children():  # a tied table, held twice, is listed once
        out.extend(child if isinstance(child, nn.ModuleList) else [child])
    return out or [model]


def generator(seed: int, index: int) -> torch.Generator:
    """Block ``index``'s own generator: distinct for every (seed, index) pair a config allows."""
    return torch.Generator().manual_seed((seed << 20) + index)


@torch.no_grad()
def init_block(block: nn.Module, seed: int, index: int, skip: set[int] | None = None) -> None:
    """Draw one block's weights from its generator; parameters whose id is in ``skip`` are left as they are."""
    g = generator(seed, index)
    for module in block.modules():
        for name, p in module.named_parameters(recurse=False):
            if skip is not None and id(p) in skip:
                continue  # a tied output layer keeps the embedding's values
            if isinstance(module, (nn.LayerNorm, nn.RMSNorm)):
                nn.init.constant_(p, 1.0 if name == "weight" else 0.0)  # gain 1, bias 0
                continue
            if isinstance(module, nn.Linear):
                bound = 1.0 / math.sqrt(module.in_features)  # PyTorch's own for nn.Linear
            elif isinstance(module, StackedExperts):
                bound = 1.0 / math.sqrt(module.in_features(name))  # each expert's, as for its own nn.Linear
            elif isinstance(module, nn.Embedding):
                bound = math.sqrt(3.0 / module.embedding_dim)  # standard deviation 1/sqrt(E)
            else:
                bound = math.sqrt(3.0)  # standard deviation 1: a learned positional table, as big as the sinusoids
            nn.init.uniform_(p, -bound, bound, generator=g)


class skip_default_init(TorchFunctionMode):
    """Layers built inside skip PyTorch's default initialisation: their weights stay as allocated.

    Why: every nn.Linear and nn.Embedding draws default weights from the shared global generator as
    it is made, and ``init_weights`` draws over all of them anyway: the first draw would cost as much
    time as the second and move a random stream other sessions read.
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in DEFAULT_FILLS:
            return args[0] if args else kwargs["tensor"]  # the tensor, untouched
        return func(*args, **kwargs)


def init_weights(model: nn.Module, seed: int) -> nn.Module:
    """Seeded weights for every parameter of ``model``, block by block (see the module's docstring)."""
    drawn: set[int] = set()
    for index, block in enumerate(blocks(model)):
        init_block(block, seed, index, skip=drawn)
        drawn.update(id(p) for p in block.parameters())
    return model


def seeded(cls: Callable[..., M], *args, seed: int, **kwargs) -> M:
    """``cls(*args, **kwargs)`` with its weights drawn only from its own seeded generators, never the global
    one; on the meta device, where there are no values, nothing is drawn."""
    with skip_default_init():
        module = cls(*args, **kwargs)
    return module if any(p.is_meta for p in module.parameters()) else init_weights(module, seed)
