"""A training loop that reports gradient clipping through the `warnings` module: when the
gradient norm exceeds `max_norm`, it warns with the norm and the per-layer norms so that a
user notices exploding gradients; `warnings.simplefilter("always")` was set so none is
swallowed. A small LSTM regressor on generated series, whose gradients exceed the clip value
on most steps.

Planted: the warning (a formatted message with every layer's norm, written to stderr) is
issued on every clipped step: text formatting and a write per step. --fixed: a counter of
clipped steps, reported once per epoch.
"""

import sys
import warnings

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
warnings.simplefilter("always")


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 64, num_layers=2, batch_first=True)
        self.head = nn.Linear(64, 1)

    def forward(self, x):
        return self.head(self.lstm(x)[0][:, -1])


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4096, 16, 4).cumsum(1)
    y = x[:, -1, :1] * 3
    model = Forecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        clipped = 0
        for start in range(0, len(x), 32):
            loss = nn.functional.mse_loss(model(x[start : start + 32]), y[start : start + 32])
            opt.zero_grad()
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
            if norm > 0.5:
                if FIXED:
                    clipped += 1
                else:
                    layers = ", ".join(f"{name}={p.grad.norm():.4f}"
                                       for name, p in model.named_parameters())
                    warnings.warn(f"gradient norm {norm:.3f} clipped to 0.5 ({layers})",
                                  RuntimeWarning, stacklevel=1)
            opt.step()
        print("epoch", epoch, loss.item(), "clipped steps", clipped)
