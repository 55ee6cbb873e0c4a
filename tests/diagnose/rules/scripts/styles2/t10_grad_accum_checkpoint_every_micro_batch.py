"""Gradient accumulation over 4 micro-batches with a 'save often' habit: a checkpoint (model,
optimizer, step) is written after every micro-batch.

Planted: torch.save of model + optimizer state in every step. --fixed: once per epoch.
"""

import os
import sys
import tempfile

import torch
from torch import nn

ACCUM = 4


def save_checkpoint(path, model, opt, step):
    torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "step": step}, path)


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    x, y = torch.randn(4096, 256), torch.randint(0, 10, (4096,))
    ckpt = os.path.join(tempfile.mkdtemp(), "last.pt")
    step = 0
    for epoch in range(2):
        for i, (xb, yb) in enumerate(zip(x.split(32), y.split(32))):
            loss = nn.functional.cross_entropy(model(xb), yb) / ACCUM
            loss.backward()
            if (i + 1) % ACCUM == 0:
                opt.step()
                opt.zero_grad()
            step += 1
            if not fixed:
                save_checkpoint(ckpt, model, opt, step)
        if fixed:
            save_checkpoint(ckpt, model, opt, step)
        print(f"epoch {epoch} done, loss {loss.item() * ACCUM:.3f}")


if __name__ == "__main__":
    main()
