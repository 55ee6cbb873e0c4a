"""Tiny models, data and a gradient-recording optimizer shared by the Trainer tests."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import TensorDataset


def make_dataset(n: int, features: int = 6, seed: int = 0) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
    return TensorDataset(x, y)


def make_mlp(features: int = 6, hidden: int = 16, dropout: float = 0.0, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(features, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, 2)
    )


class RecordingSGD(torch.optim.SGD):
    """SGD that keeps a copy of every gradient it was asked to apply (what the loop handed it)."""

    def __init__(self, params, lr: float = 0.0):
        super().__init__(params, lr=lr)
        self.seen: list[list[torch.Tensor]] = []

    def step(self, closure=None):
        self.seen.append([p.grad.detach().clone() for g in self.param_groups for p in g["params"]])
        return super().step(closure)


def total_norm(grads) -> float:
    return torch.linalg.vector_norm(torch.stack([g.norm() for g in grads])).item()
