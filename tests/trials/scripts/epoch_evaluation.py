"""Eight training steps an epoch, then an evaluation with autograd on over a set four times the
training set: most of each cycle is evaluation, and none of it is in a window of fewer steps
than an epoch."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    x = torch.randn(2560, 64)
    y = (x[:, 0] > 0).long()
    train = DataLoader(TensorDataset(x[:512], y[:512]), batch_size=64, shuffle=True)
    val = DataLoader(TensorDataset(x[512:], y[512:]), batch_size=64)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(6):
        model.train()
        for xb, yb in train:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(xb), yb).backward()
            optimizer.step()
        model.eval()
        correct = 0
        for xb, yb in val:  # no torch.no_grad()
            correct += int((model(xb).argmax(1) == yb).sum())


if __name__ == "__main__":
    main()
