"""A Keras-1-like `fit_generator(generator, steps_per_epoch, epochs)` written in torch: a Python
generator yields batches as lists of NumPy rows (a record reader's output) and the trainer
converts them with the legacy tensor constructors `torch.FloatTensor(...)` /
`torch.LongTensor(...)`. A tabular MLP on generated records.

Planted: `torch.FloatTensor(rows)` on a list of 256 NumPy arrays: the legacy constructor walks
the list element by element in Python. --fixed: `torch.from_numpy(np.stack(rows))`.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def record_generator(features, labels, batch_size, rng):
    while True:
        idx = rng.integers(0, len(features), batch_size)
        yield [features[i] for i in idx], [int(labels[i]) for i in idx]


def to_tensors(rows, labels):
    if FIXED:
        return torch.from_numpy(np.stack(rows)), torch.as_tensor(labels)
    return torch.FloatTensor(rows), torch.LongTensor(labels)


def fit_generator(model, generator, steps_per_epoch, epochs, lr=1e-3):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        for _ in range(steps_per_epoch):
            x, y = to_tensors(*next(generator))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    features = rng.standard_normal((20000, 300)).astype(np.float32)
    labels = (features[:, :5].sum(1) > 0).astype(np.int64)
    model = nn.Sequential(nn.Linear(300, 64), nn.ReLU(), nn.Linear(64, 2))
    fit_generator(model, record_generator(features, labels, 256, rng), steps_per_epoch=60,
                  epochs=3)
