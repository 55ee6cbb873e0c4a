"""Curriculum learning over a pool of generated examples kept as Python lists of floats (rows
read from a JSON-like store): each step samples a batch whose difficulty grows with the epoch
(a competence schedule) and builds the batch tensor from the chosen rows.

Planted: the batch is built with `torch.tensor([pool[i] for i in chosen])`, a list of 512 Python
lists of 256 floats converted element by element every step. --fixed: the pool is converted to
one tensor once and the batch is an index into it.
"""

import math
import random
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def competence(step, total, c0=0.2):
    return min(1.0, math.sqrt(step * (1 - c0**2) / total + c0**2))


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    g = torch.Generator().manual_seed(1)
    pool_tensor = torch.randn(8000, 256, generator=g)
    difficulty = pool_tensor.abs().mean(1).argsort().tolist()  # easiest first
    pool = pool_tensor.tolist()  # rows as the store gives them
    labels = (pool_tensor[:, :5].sum(1) > 0).long()
    table = torch.tensor(pool) if FIXED else None
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    total = 150
    for step in range(total):
        reach = max(512, int(competence(step, total) * len(pool)))
        chosen = [difficulty[random.randrange(reach)] for _ in range(512)]
        if FIXED:
            x = table[chosen]
        else:
            x = torch.tensor([pool[i] for i in chosen])
        loss = nn.functional.cross_entropy(model(x), labels[chosen])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print("step", step, float(loss))
