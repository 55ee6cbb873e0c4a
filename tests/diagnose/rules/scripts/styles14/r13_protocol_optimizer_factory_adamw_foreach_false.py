"""The optimizer comes from a factory typed by a `typing.Protocol` (`OptimizerFactory.__call__(
params) -> Optimizer`); the concrete factory is a small class holding the settings. The model is
a deep residual MLP with a LayerNorm per block (many small parameter tensors).

Planted: the factory passes `foreach=False` ("deterministic updates"): AdamW then updates the
~100 parameter tensors one at a time, several small ops each.
--fixed: the factory asks for `foreach=True` (on a CPU the default is the per-tensor loop too).
"""

import sys
from typing import Protocol

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class OptimizerFactory(Protocol):
    def __call__(self, params) -> torch.optim.Optimizer: ...


class AdamWFactory:
    def __init__(self, lr, weight_decay, deterministic):
        self.kwargs = dict(lr=lr, weight_decay=weight_decay, foreach=not deterministic)

    def __call__(self, params):
        return torch.optim.AdamW(params, **self.kwargs)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return x + self.fc(torch.relu(self.norm(x)))


def build(make_optimizer: OptimizerFactory):
    model = nn.Sequential(nn.Linear(32, 64), *[Block(64) for _ in range(24)], nn.Linear(64, 1))
    return model, make_optimizer(model.parameters())


if __name__ == "__main__":
    torch.manual_seed(0)
    model, opt = build(AdamWFactory(1e-3, 0.01, deterministic=not FIXED))
    x = torch.randn(4096, 32)
    y = torch.sin(x[:, :1])
    for epoch in range(4):
        for idx in torch.randperm(len(x)).split(64):
            loss = nn.functional.mse_loss(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
