"""An MNIST-sized MLP (784 -> 3 x 512 -> 10) fed two samples a step by a DataLoader, SGD.

Its ops are 6-16x the trivial-op cost, across the 10x line D202's estimate stands on (the miss of
round 4): the batch what-if measures 2x and 4x the batch, ~0.3x the time per sample at 4x."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    images = torch.randn(4096, 784)
    labels = torch.randint(0, 10, (4096,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=2, shuffle=True)
    model = nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, 10),
    )  # fmt: skip
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(3):
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
