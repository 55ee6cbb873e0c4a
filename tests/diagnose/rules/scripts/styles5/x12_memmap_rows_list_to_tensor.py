"""Memory-mapped NumPy data (`np.memmap` over a file written to a temp dir): a batch sampler
yields index lists, and a `MemmapBatches` helper gathers the rows with a list comprehension
and calls `torch.tensor(...)` on the list of NumPy rows.

Planted: torch.tensor on a list of NumPy arrays, every batch. --fixed: fancy-index the memmap
once (`self.mm[sorted_idx]`) and `torch.from_numpy` the result.
"""

import os
import sys
import tempfile

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv
ROWS, COLS = 20000, 256


class MemmapBatches:
    def __init__(self, path, labels, batch_size):
        self.mm = np.memmap(path, dtype=np.float32, mode="r", shape=(ROWS, COLS))
        self.labels, self.batch_size = labels, batch_size

    def __iter__(self):
        order = np.random.permutation(ROWS)
        for start in range(0, ROWS, self.batch_size):
            idx = np.sort(order[start:start + self.batch_size])
            if FIXED:
                x = torch.from_numpy(np.ascontiguousarray(self.mm[idx]))
            else:
                x = torch.tensor([self.mm[i] for i in idx])
            yield x, self.labels[torch.from_numpy(idx)]


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "features.f32")
        np.random.default_rng(0).normal(size=(ROWS, COLS)).astype(np.float32).tofile(path)
        labels = torch.randint(0, 10, (ROWS,))
        model = nn.Sequential(nn.Linear(COLS, 128), nn.ReLU(), nn.Linear(128, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        for epoch in range(2):
            for x, y in MemmapBatches(path, labels, 256):
                loss = nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(epoch, loss.item())


if __name__ == "__main__":
    main()
