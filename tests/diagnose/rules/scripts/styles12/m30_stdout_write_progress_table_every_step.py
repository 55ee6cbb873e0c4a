"""A hand-made progress display: after every step the loop writes a one-line status with
`sys.stdout.write(...)` and `sys.stdout.flush()`: step, loss, learning rate, and the norm of
each layer's weights, formatted as a table row. A small MLP with a cosine LR schedule.

Planted: the status line (with a per-layer weight norm formatted from tensors) is written and
flushed every step. --fixed: the line is written every 100 steps.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def status(step, loss, lr, model):
    norms = " ".join(f"{name}={p.norm():8.4f}" for name, p in model.named_parameters())
    return f"step {step:6d} | loss {loss:8.5f} | lr {lr:.2e} | {norms}\n"


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(10000, 32)
    y = (x[:, :4].sum(1) > 0).long()
    model = nn.Sequential(
        *[m for _ in range(4) for m in (nn.Linear(32, 32), nn.ReLU())], nn.Linear(32, 2)
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 400)
    step = 0
    for _epoch in range(3):
        for idx in torch.randperm(len(x)).split(64):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if not FIXED or step % 100 == 0:
                sys.stdout.write(status(step, float(loss), sched.get_last_lr()[0], model))
                sys.stdout.flush()
