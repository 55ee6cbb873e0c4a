"""Forms of planted problems that rules TD101, TD102 and TD120 missed before round 10, each with
a control that must stay silent."""

from __future__ import annotations

from lint_helpers import codes, lint_text

LIST_OF_ARRAYS = """import numpy as np
import torch

rng = np.random.default_rng(0)
samples = [rng.standard_normal(16).astype(np.float32) for _ in range(100)]
numbers = [float(i) for i in range(100)]
for step in range(10):
    x = torch.tensor([samples[i] for i in range(8)])
    y = torch.tensor([numbers[i] for i in range(8)])
"""


def test_items_of_a_list_of_generator_arrays_are_arrays():
    found = lint_text(LIST_OF_ARRAYS, select="TD101").violations
    assert [v.line for v in found] == [8]


AUGMENTING_DATASET = """import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Crops(Dataset):
    def __init__(self):
        self.images = np.zeros((64, 40, 40, 3), dtype=np.uint8)
        self.rng = np.random.default_rng(1)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        top = self.rng.integers(0, 8)
        return torch.from_numpy(self.images[i, top:top + 32].copy())


class InMemory(Dataset):
    def __init__(self):
        self.x = torch.randn(64, 3)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i]


model = torch.nn.Linear(3, 1)
for data in (Crops(), InMemory()):
    loader = DataLoader(data, batch_size=8)
    for epoch in range(2):
        for batch in loader:
            model(batch.float().flatten(1)[:, :3]).sum().backward()
"""


def test_random_augmentation_in_getitem_costs_work_per_item():
    assert codes(lint_text(AUGMENTING_DATASET, select="TD102")) == []  # dataset not shown
    direct = AUGMENTING_DATASET.replace(
        "for data in (Crops(), InMemory()):\n    loader = DataLoader(data, batch_size=8)",
        "for loader in (DataLoader(Crops(), batch_size=8), DataLoader(InMemory(), batch_size=8)):",
    )
    assert [v.line for v in lint_text(direct, select="TD102").violations] == [31]


ROW_LOOP = """import torch


def weighted_loss(pred, target, weights):
    total = pred.new_zeros(())
    for i in range(pred.shape[0]):
        err = pred[i] - target[i]
        total = total + weights[i] * (err * err).sum()
    return total


model = torch.nn.Linear(4, 2)
for step in range(5):
    x = torch.randn(8, 4)
    loss = weighted_loss(model(x), torch.randn(8, 2), torch.rand(8))
    loss.backward()
"""


def test_rows_of_a_parameter_every_caller_passes_a_tensor_for():
    assert codes(lint_text(ROW_LOOP, select="TD120")) == ["TD120"]
    lists = ROW_LOOP.replace(
        "weighted_loss(model(x), torch.randn(8, 2), torch.rand(8))",
        "weighted_loss(list(range(8)), [0.0] * 8, [1.0] * 8)",
    )
    assert codes(lint_text(lists, select="TD120")) == []


ROWS_OF_SELF_ARRAY = """import numpy as np
import torch


class Rows(torch.utils.data.Dataset):
    def __init__(self):
        self.rows = np.random.rand(100, 8)
        self.start = np.zeros(8)

    def __getitem__(self, i):
        return torch.tensor(self.rows[i])

    def initial(self):
        return torch.tensor(self.start)
"""


def test_rows_of_an_array_attribute_but_not_the_whole_attribute():
    found = lint_text(ROWS_OF_SELF_ARRAY, select="TD101").violations
    assert [v.line for v in found] == [11]
