"""A classifier with a linear-warmup + cosine LR schedule (LambdaLR) and a "checkpoint every N
steps" policy, where N is derived from the run length: `steps_per_epoch // checkpoints_per_epoch`
with checkpoints_per_epoch = 1000, clamped to at least 1. With 64 steps per epoch the clamp wins.

Planted: torch.save of the model, optimizer and scheduler every step. --fixed: two checkpoints
per epoch.
"""

import math
import os
import sys
import tempfile

import torch
from torch import nn

CHECKPOINTS_PER_EPOCH = 2 if "--fixed" in sys.argv else 1000


def warmup_cosine(warmup, total):
    def factor(step):
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))

    return factor


def save_checkpoint(path, model, opt, sched, step):
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(), "step": step}, path)


def main():
    torch.manual_seed(0)
    x, y = torch.randn(8192, 128), torch.randint(0, 10, (8192,))
    steps_per_epoch, epochs = len(x) // 128, 4
    model = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, warmup_cosine(50, steps_per_epoch * epochs))
    save_every = max(1, steps_per_epoch // CHECKPOINTS_PER_EPOCH)
    out = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
    step = 0
    for epoch in range(epochs):
        for xb, yb in zip(x.split(128), y.split(128)):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % save_every == 0:
                save_checkpoint(out, model, opt, sched, step)
        print(epoch, sched.get_last_lr()[0], loss.item())


if __name__ == "__main__":
    main()
