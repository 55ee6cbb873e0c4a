"""Random search over dropout rate and width in one process: each trial trains a fresh MLP for
two epochs, then `score(model)` measures its accuracy on a held-out split under
`torch.inference_mode()`; the best trial is reported.

Planted: `score()` never calls `model.eval()`: the held-out accuracy is computed with Dropout
still active, so every trial is ranked on randomly masked activations (and the ranking favours
low dropout for the wrong reason). --fixed: `score()` switches to eval() and back to train().
"""

import random
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


@torch.inference_mode()
def score(model, x, y):
    if FIXED:
        model.eval()
    correct = sum(
        int((model(xb).argmax(1) == yb).sum()) for xb, yb in zip(x.split(512), y.split(512))
    )
    if FIXED:
        model.train()
    return correct / len(y)


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    x = torch.randn(12000, 32)
    y = (x[:, :3].sum(1) > 0).long()
    tx, ty, hx, hy = x[:6000], y[:6000], x[6000:], y[6000:]
    trials = []
    for trial in range(6):
        p, width = random.choice([0.1, 0.3, 0.5]), random.choice([128, 256])
        model = nn.Sequential(
            nn.Linear(32, width),
            nn.ReLU(),
            nn.Dropout(p),
            nn.Linear(width, width),
            nn.ReLU(),
            nn.Dropout(p),
            nn.Linear(width, 2),
        )
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for _epoch in range(2):
            for idx in torch.randperm(len(tx)).split(128):
                loss = nn.functional.cross_entropy(model(tx[idx]), ty[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        trials.append((score(model, hx, hy), p, width))
        print("trial", trial, trials[-1])
    print("best", max(trials))
