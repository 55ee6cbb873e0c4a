"""A dataclass experiment whose `__post_init__` builds the model and checks that it exports:
it runs `torch.jit.trace` on an example batch (a sanity check kept from a deployment script).
An MLP with Dropout and BatchNorm on generated tabular data.

Planted: the export check calls `self.model.eval()` before tracing and never switches back:
the whole training runs in eval mode (Dropout off, BatchNorm on its running statistics, never
updated). --fixed: `self.model.train()` after the check.
"""

import sys
from dataclasses import dataclass, field

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


@dataclass
class Experiment:
    width: int = 256
    dropout: float = 0.3
    model: nn.Module = field(init=False)

    def __post_init__(self):
        self.model = nn.Sequential(
            nn.Linear(40, self.width),
            nn.BatchNorm1d(self.width),
            nn.ReLU(),
            nn.Dropout(self.dropout),
            nn.Linear(self.width, 3),
        )
        self.check_export()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def check_export(self):
        self.model.eval()
        with torch.no_grad():
            torch.jit.trace(self.model, torch.randn(4, 40))
        if FIXED:
            self.model.train()


if __name__ == "__main__":
    torch.manual_seed(0)
    exp = Experiment()
    x = torch.randn(6000, 40)
    y = x[:, :3].argmax(1)
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(64):
            loss = nn.functional.cross_entropy(exp.model(x[idx]), y[idx])
            exp.opt.zero_grad()
            loss.backward()
            exp.opt.step()
        print("epoch", epoch, float(loss))
