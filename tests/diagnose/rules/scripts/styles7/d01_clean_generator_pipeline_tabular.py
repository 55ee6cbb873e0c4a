"""CLEAN: a generator pipeline (`read_rows -> batched -> to_tensors`, `itertools.islice` for the
step budget) feeding an MLP regressor; the batches are stacked by NumPy and handed over with
`torch.from_numpy`; the loss is read every 200 steps. Nothing is planted (`--fixed` changes
nothing).
"""

import itertools

import numpy as np
import torch
from torch import nn

FEATURES = 40


def read_batches(table, targets, size, rng):
    while True:
        order = rng.permutation(len(table))
        for i in range(0, len(order) - size + 1, size):
            idx = order[i : i + size]
            yield table[idx], targets[idx]


def to_tensors(batches):
    for x, y in batches:
        yield torch.from_numpy(x), torch.from_numpy(y)


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    table = rng.normal(size=(30000, FEATURES)).astype(np.float32)
    targets = (table[:, :5].sum(1) + 0.1 * rng.normal(size=len(table))).astype(np.float32)
    model = nn.Sequential(nn.Linear(FEATURES, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step, (x, y) in enumerate(itertools.islice(to_tensors(read_batches(table, targets, 256, rng)), 1200)):
        loss = nn.functional.mse_loss(model(x).squeeze(1), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 200 == 0:
            print(step, loss.item())
