"""A deep-and-cross-like recommender over generated tabular logs held in NumPy (dense features
plus hashed categorical ids into big embedding tables). Batches are drawn by a generator that
yields lists of per-row NumPy arrays, "like the production feature store returns them".

Planted: each batch becomes a tensor with `torch.tensor(rows)` on a list of 512 NumPy arrays
(dense) and `torch.tensor(ids)` on another list: torch converts element by element.
--fixed: `torch.from_numpy(np.stack(rows))`.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def feature_store(dense, cats, labels, batch, rng):
    while True:
        idx = rng.integers(0, len(dense), batch)
        yield [dense[i] for i in idx], [cats[i] for i in idx], labels[idx]


def to_tensor(rows, dtype):
    if FIXED:
        return torch.from_numpy(np.stack(rows)).to(dtype)
    return torch.tensor(rows, dtype=dtype)


class CrossNet(nn.Module):
    def __init__(self, dense=64, fields=8, buckets=100000, dim=16):
        super().__init__()
        self.emb = nn.Embedding(buckets, dim)
        width = dense + fields * dim
        self.cross = nn.ModuleList(nn.Linear(width, width) for _ in range(2))
        self.deep = nn.Sequential(nn.Linear(width, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, dense, cats):
        x0 = torch.cat([dense, self.emb(cats).flatten(1)], 1)
        x = x0
        for layer in self.cross:
            x = x0 * layer(x) + x
        return self.deep(x).squeeze(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((50000, 64)).astype(np.float32)
    cats = rng.integers(0, 100000, (50000, 8))
    labels = (dense[:, 0] + (cats[:, 0] % 3 == 0) > 0.5).astype(np.float32)
    model = CrossNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    store = feature_store(dense, cats, labels, 512, rng)
    for step in range(250):
        rows, ids, y = next(store)
        logits = model(to_tensor(rows, torch.float32), to_tensor(ids, torch.long))
        loss = nn.functional.binary_cross_entropy_with_logits(logits, torch.from_numpy(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(step, float(loss))
