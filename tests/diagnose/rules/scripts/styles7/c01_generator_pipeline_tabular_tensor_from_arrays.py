"""A training loop written as a generator pipeline: rows are streamed from a NumPy table by
`read_rows()`, shuffled in a buffer, grouped by `itertools.islice` into batches and turned into
tensors by a `to_tensors()` stage; an MLP regressor on tabular data.

Planted: the tensor stage calls `torch.tensor(list_of_row_arrays)` on each batch (a Python list
of 512 small NumPy rows). --fixed: the rows are stacked with `np.stack` first and handed over by
`torch.from_numpy`.
"""

import itertools
import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv
FEATURES = 48


def read_rows(table, targets, rng):
    while True:
        for i in rng.permutation(len(table)):
            yield table[i], targets[i]


def shuffled(stream, buffer_size, rng):
    buffer = list(itertools.islice(stream, buffer_size))
    for item in stream:
        j = int(rng.integers(buffer_size))
        yield buffer[j]
        buffer[j] = item


def batched(stream, size):
    while True:
        chunk = list(itertools.islice(stream, size))
        if not chunk:
            return
        yield chunk


def to_tensors(batches):
    for chunk in batches:
        rows = [r for r, _ in chunk]
        ys = [y for _, y in chunk]
        if FIXED:
            yield torch.from_numpy(np.stack(rows)), torch.from_numpy(np.asarray(ys))
        else:
            yield torch.tensor(rows), torch.tensor(ys)


def main():
    rng = np.random.default_rng(0)
    table = rng.normal(size=(20000, FEATURES)).astype(np.float32)
    w = rng.normal(size=FEATURES).astype(np.float32)
    targets = (table @ w + 0.1 * rng.normal(size=len(table))).astype(np.float32)
    model = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    pipeline = to_tensors(batched(shuffled(read_rows(table, targets, rng), 2048, rng), 512))
    for step, (x, y) in enumerate(itertools.islice(pipeline, 600)):
        loss = nn.functional.mse_loss(model(x).squeeze(1), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(f"step {step} mse {loss.item():.3f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    main()
