"""A 512-wide classifier with Dropout fed two samples a step by a shuffling DataLoader: the batch
what-if (2x and 4x the batch) replays it on copies while the program's random streams (the
shuffle, the dropout masks) must stay untouched. `train(steps)` returns the losses, to run under
torchdoctor.watch() and then on after it."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def build():
    torch.manual_seed(0)
    images, labels = torch.randn(1024, 784), torch.randint(0, 10, (1024,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=2, shuffle=True)
    model = nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, 10),
    )  # fmt: skip
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    return loader, model, optimizer


def train(loader, model, optimizer, steps):
    losses = []
    for step, (x, y) in enumerate(loader):
        if step == steps:
            break
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
