"""Gradient accumulation over 4 micro-batches, with the optimizer calls gathered in a helper
`optimizer_update()` that the author "tidied": it clears the gradients first and then steps.

Planted: zero_grad between backward and step: every optimizer step sees no gradients.
--fixed: the helper steps first and clears after.
"""

import sys

import torch
from torch import nn

ACCUM = 4
FIXED = "--fixed" in sys.argv


def optimizer_update(model, optimizer, max_norm=1.0):
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    if not FIXED:
        optimizer.zero_grad()
    optimizer.step()
    if FIXED:
        optimizer.zero_grad()


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 384), nn.GELU(), nn.Linear(384, 384), nn.GELU(),
                          nn.Linear(384, 10))
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    x, y = torch.randn(16384, 64), torch.randint(0, 10, (16384,))
    for epoch in range(2):
        for i, (xb, yb) in enumerate(zip(x.split(32), y.split(32))):
            loss = nn.functional.cross_entropy(model(xb), yb) / ACCUM
            loss.backward()
            if (i + 1) % ACCUM == 0:
                optimizer_update(model, optimizer)
        print(epoch, loss.item() * ACCUM)


if __name__ == "__main__":
    main()
