"""Tabular regression trained one tiny batch at a time (batch_size=2)."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    features = torch.randn(1024, 32)
    target = features @ torch.randn(32, 1) + 0.1 * torch.randn(1024, 1)
    loader = DataLoader(TensorDataset(features, target), batch_size=2, shuffle=True)
    model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                          nn.Linear(64, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    for epoch in range(2):
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
