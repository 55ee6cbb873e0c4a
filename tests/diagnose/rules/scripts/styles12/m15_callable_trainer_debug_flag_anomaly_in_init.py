"""A `Trainer` object configured by keyword arguments and called like a function for each epoch
(`trainer(loader_batches)`); its `__init__` applies "debug" settings. A 1D-conv sequence
classifier on generated signals.

Planted: `debug=True` is the constructor's default and `__init__` calls
`torch.autograd.set_detect_anomaly(debug)`: anomaly detection stays on for the whole run, every
backward node records a traceback and every gradient is checked for NaN. --fixed: `debug=False`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Trainer:
    def __init__(self, model, lr=1e-3, debug=True):
        torch.autograd.set_detect_anomaly(debug)
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)

    def __call__(self, batches):
        for x, y in batches:
            loss = nn.functional.cross_entropy(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return float(loss)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4000, 4, 128)
    y = (x[:, 0, :16].mean(1) > 0).long()
    model = nn.Sequential(
        nn.Conv1d(4, 32, 5, padding=2),
        nn.ReLU(),
        nn.Conv1d(32, 32, 5, padding=2),
        nn.ReLU(),
        nn.Conv1d(32, 32, 5, padding=2),
        nn.ReLU(),
        nn.AdaptiveAvgPool1d(1),
        nn.Flatten(),
        nn.Linear(32, 2),
    )
    trainer = Trainer(model, debug=not FIXED)
    for epoch in range(3):
        batches = [(x[i], y[i]) for i in torch.randperm(len(x)).split(64)]
        print("epoch", epoch, trainer(batches))
