"""A training loop that shows an exponentially smoothed loss in its progress line, as many
progress-bar loops do: `smooth = 0.98 * smooth + 0.02 * loss` after every step, printed every 50
steps. A small conv autoencoder-classifier on generated images.

Planted: `smooth` is updated with the loss tensor itself, so it is a tensor whose graph chains
every step's loss and graph: nothing of any step's autograd graph is ever freed.
--fixed: `smooth = 0.98 * smooth + 0.02 * loss.item()`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv

if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(5000, 1, 20, 20)
    y = (x[:, 0, 5:15, 5:15].mean((1, 2)) > 0).long()
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(32 * 25, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    smooth = 0.0
    for epoch in range(3):
        perm = torch.randperm(len(x))
        for step, start in enumerate(range(0, len(x), 64)):
            idx = perm[start : start + 64]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            smooth = 0.98 * smooth + 0.02 * (loss.item() if FIXED else loss)
            if step % 50 == 0:
                print(f"epoch {epoch} step {step} loss {float(smooth):.4f}")
