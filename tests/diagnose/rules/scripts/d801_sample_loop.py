"""Augments each sample of the batch in a Python loop inside the training step."""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 16 * 16, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    images = torch.randn(2048, 3, 16, 16)
    labels = torch.randint(0, 10, (2048,))
    for step in range(300):
        idx = torch.randint(0, 2048, (128,))
        batch, target = images[idx].clone(), labels[idx]
        for i in range(batch.size(0)):
            if torch.rand(()) < 0.5:
                batch[i] = batch[i].flip(-1)
            batch[i] = (batch[i] - batch[i].mean()) / (batch[i].std() + 1e-5)
        loss = nn.functional.cross_entropy(model(batch), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
