"""Continual learning over a sequence of tasks (permuted-feature tasks) with an experience-replay
buffer: each task trains on its own data mixed with samples replayed from the buffer, then every
task seen so far is evaluated. An MLP with BatchNorm and Dropout.

Planted: `model.train()` is called once, before the task loop; `evaluate_all()` ends with the
model in eval mode, so from the second task on the model trains in eval mode (Dropout off,
BatchNorm statistics frozen). --fixed: `model.train()` at the start of every task.
"""

import random
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def make_task(seed, n=4000):
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(48, generator=g)
    x = torch.randn(n, 48, generator=g)
    y = (x[:, :6].sum(1) > 0).long()
    return x[:, perm], y


@torch.no_grad()
def evaluate_all(model, tasks):
    model.eval()
    return [float((model(x[:1000]).argmax(-1) == y[:1000]).float().mean()) for x, y in tasks]


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    model = nn.Sequential(nn.Linear(48, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.2),
                          nn.Linear(256, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.2),
                          nn.Linear(256, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    buffer, seen = [], []
    model.train()
    for task_id in range(5):
        x, y = make_task(task_id)
        seen.append((x, y))
        if FIXED:
            model.train()
        for step in range(120):
            idx = torch.randint(0, len(x), (64,))
            xb, yb = x[idx], y[idx]
            if buffer:
                rx, ry = zip(*random.sample(buffer, min(32, len(buffer))))
                xb, yb = torch.cat([xb, torch.stack(rx)]), torch.cat([yb, torch.stack(ry)])
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if len(buffer) < 2000:
                buffer.extend(zip(x[idx[:4]], y[idx[:4]]))
        print("task", task_id, evaluate_all(model, seen))
