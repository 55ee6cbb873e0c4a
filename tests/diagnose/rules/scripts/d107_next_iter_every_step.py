"""A step-based loop that draws each batch with next(iter(loader)) from a loader with workers."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    x = torch.randn(2048, 32)
    y = (x[:, 0] > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True, num_workers=2)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(30):
        xb, yb = next(iter(loader))
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()


if __name__ == "__main__":
    main()
