"""A float64 regression trained two samples at a time, with Dropout and batches drawn from torch's
generator: the precision (float32) and batch (2x, 4x) what-ifs replay it on copies while the
program's random streams must stay untouched. `train(steps)` returns the losses, to run under
torchdoctor.watch() and then on after it."""

import torch
from torch import nn


def build():
    torch.manual_seed(0)
    features = torch.randn(512, 16, dtype=torch.float64)
    target = features[:, :4].sum(dim=1, keepdim=True)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Dropout(0.1), nn.Linear(32, 1)).double()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    return (features, target), model, optimizer


def train(data, model, optimizer, steps):
    features, target = data
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, len(features), (2,))
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(features[idx]), target[idx])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
