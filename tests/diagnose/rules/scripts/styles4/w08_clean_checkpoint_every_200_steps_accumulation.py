"""CLEAN: gradient accumulation over 4 micro-batches with clipping, a checkpoint (model and
optimizer) every 200 optimizer steps, and early stopping checked once per epoch. Nothing is
planted (`--fixed` changes nothing).
"""

import os
import tempfile

import torch
from torch import nn

ACCUM = 4


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(48, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 5))
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    x, y = torch.randn(32768, 48), torch.randint(0, 5, (32768,))
    vx, vy = torch.randn(2048, 48), torch.randint(0, 5, (2048,))
    ckpt = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
    updates, best, bad = 0, float("inf"), 0
    for epoch in range(2):
        for i, (xb, yb) in enumerate(zip(x.split(32), y.split(32))):
            (nn.functional.cross_entropy(model(xb), yb) / ACCUM).backward()
            if (i + 1) % ACCUM:
                continue
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad()
            updates += 1
            if updates % 200 == 0:
                torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, ckpt)
        model.eval()
        with torch.no_grad():
            val = nn.functional.cross_entropy(model(vx), vy).item()
        model.train()
        best, bad = (val, 0) if val < best else (best, bad + 1)
        if bad >= 2:
            break
        print(epoch, val)


if __name__ == "__main__":
    main()
