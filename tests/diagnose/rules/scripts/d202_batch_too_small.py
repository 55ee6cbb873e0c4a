"""Tabular regression trained one tiny batch at a time (batch_size=2), batches sliced by hand."""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    features = torch.randn(1024, 32)
    target = features @ torch.randn(32, 1) + 0.1 * torch.randn(1024, 1)
    model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                          nn.Linear(64, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    batch_size = 2
    for epoch in range(2):
        order = torch.randperm(len(features))
        for i in range(0, len(features), batch_size):
            idx = order[i:i + batch_size]
            optimizer.zero_grad()
            loss = loss_fn(model(features[idx]), target[idx])
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
