"""`torch.utils.data.random_split` into train/validation `Subset`s of one `TensorDataset`, each
wrapped in a `DataLoader` with a large batch; validation per epoch under `torch.no_grad()` and
`model.eval()`. A tabular binary classifier.

Planted: the `Subset`s of an in-memory `TensorDataset` go through the default sampler and collate,
so each batch of 1024 rows is fetched one row at a time (1024 `__getitem__` calls and a stack).
--fixed: the split indices slice the tensors once and batches are index slices of them.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

FIXED = "--fixed" in sys.argv


def tensor_batches(dataset, subset, batch_size, shuffle):
    x, y = (t[torch.as_tensor(subset.indices)] for t in dataset.tensors)
    order = torch.randperm(len(x)) if shuffle else torch.arange(len(x))
    for idx in order.split(batch_size):
        yield x[idx], y[idx]


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(50000, 20)
    y = ((x[:, 0] * x[:, 1] + x[:, 2]) > 0).float()
    full = TensorDataset(x, y)
    train_set, val_set = random_split(
        full, [45000, 5000], generator=torch.Generator().manual_seed(0)
    )
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(3):
        if FIXED:
            train_batches = tensor_batches(full, train_set, 1024, True)
            val_batches = tensor_batches(full, val_set, 1024, False)
        else:
            train_batches = DataLoader(train_set, batch_size=1024, shuffle=True)
            val_batches = DataLoader(val_set, batch_size=1024)
        model.train()
        for xb, yb in train_batches:
            loss = nn.functional.binary_cross_entropy_with_logits(model(xb).squeeze(1), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for xb, yb in val_batches:
                correct += ((model(xb).squeeze(1) > 0).float() == yb).sum().item()
        print(f"epoch {epoch} val acc {correct / len(val_set):.3f}")
