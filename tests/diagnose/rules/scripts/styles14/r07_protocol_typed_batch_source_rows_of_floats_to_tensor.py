"""The step is typed against a `typing.Protocol` (`BatchSource` with `next_batch()`); the
concrete source reads a tabular file's records as Python lists of floats (as `csv.reader` plus
`float()` gives them) and hands the step a list of rows.

Planted: the step converts the rows with `torch.tensor(rows)`: 256 x 300 Python floats walked
one by one every step.
--fixed: the source converts the whole table once to one float32 tensor and hands out slices.
"""

import random
import sys
from typing import Protocol

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class BatchSource(Protocol):
    def next_batch(self) -> tuple[object, object]: ...


class RowSource:
    def __init__(self, rows, labels, batch):
        self.rows, self.labels, self.batch = rows, labels, batch
        self.order = list(range(len(rows)))
        self.pos = len(rows)

    def next_batch(self):
        if self.pos + self.batch > len(self.rows):
            random.shuffle(self.order)
            self.pos = 0
        idx = self.order[self.pos : self.pos + self.batch]
        self.pos += self.batch
        return [self.rows[i] for i in idx], [self.labels[i] for i in idx]


class TensorSource:
    def __init__(self, rows, labels, batch):
        self.rows, self.labels, self.batch = torch.tensor(rows), torch.tensor(labels), batch
        self.order = torch.randperm(len(self.rows))
        self.pos = 0

    def next_batch(self):
        if self.pos + self.batch > len(self.rows):
            self.order = torch.randperm(len(self.rows))
            self.pos = 0
        idx = self.order[self.pos : self.pos + self.batch]
        self.pos += self.batch
        return self.rows[idx], self.labels[idx]


def train_step(model, opt, source: BatchSource):
    rows, labels = source.next_batch()
    x = rows if isinstance(rows, torch.Tensor) else torch.tensor(rows)
    y = labels if isinstance(labels, torch.Tensor) else torch.tensor(labels)
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


if __name__ == "__main__":
    random.seed(0)
    torch.manual_seed(0)
    rows = [[random.gauss(0, 1) for _ in range(300)] for _ in range(4096)]
    labels = [int(r[0] + r[1] > 0) for r in rows]
    source = (TensorSource if FIXED else RowSource)(rows, labels, 256)
    model = nn.Sequential(nn.Linear(300, 128), nn.ReLU(), nn.Linear(128, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(600):
        loss = train_step(model, opt, source)
        if step % 100 == 0:
            print(step, float(loss))
