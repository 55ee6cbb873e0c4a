"""A classifier with Dropout whose gradients are zero-filled every step (zero_grad(set_to_none=
False)), batches drawn from torch's generator: the set_to_none what-if replays its forward and
backward on a copy while the program's random streams and gradients must stay untouched.
`train(steps)` returns the losses, to run under torchdoctor.watch() and then on after it."""

import torch
from torch import nn


def build():
    torch.manual_seed(0)
    features, labels = torch.randn(512, 256), torch.randint(0, 10, (512,))
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    return (features, labels), model, optimizer


def train(data, model, optimizer, steps):
    features, labels = data
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, len(features), (8,))
        optimizer.zero_grad(set_to_none=False)
        loss = nn.functional.cross_entropy(model(features[idx]), labels[idx])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
