"""A Siamese network for duplicate detection over precomputed NumPy feature vectors: a pair
sampler draws half positive pairs (two noisy views of the same record) and half negative pairs
from a NumPy feature store, the two branches share weights, and a contrastive margin loss
trains them.

Planted: each batch is built as `torch.tensor([store[i] for i in left])`, a list of 128 NumPy
rows handed to `torch.tensor`, which converts it element by element. --fixed:
`torch.from_numpy(store[left])` (one fancy-indexed array).
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv
DIM = 256


def batch_of(store, rows):
    if FIXED:
        return torch.from_numpy(store[rows])
    return torch.tensor([store[i] for i in rows])


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    base = rng.standard_normal((5000, DIM)).astype(np.float32)
    views = (base + 0.3 * rng.standard_normal(base.shape)).astype(np.float32)
    store = np.concatenate([base, views])
    branch = nn.Sequential(nn.Linear(DIM, 128), nn.ReLU(), nn.Linear(128, 32))
    opt = torch.optim.Adam(branch.parameters(), lr=1e-3)
    for epoch in range(3):
        for _ in range(60):
            left = rng.integers(0, 5000, 128)
            same = rng.random(128) < 0.5
            right = np.where(same, left + 5000, rng.integers(0, 5000, 128))
            a, b = branch(batch_of(store, left)), branch(batch_of(store, right))
            d = (a - b).pow(2).sum(1)
            target = torch.from_numpy(same.astype(np.float32))
            loss = (target * d + (1 - target) * nn.functional.relu(1.0 - d.clamp_min(1e-9).sqrt()).pow(2)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
