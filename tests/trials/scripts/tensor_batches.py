"""Planted problem (D108): in-memory tensors fetched one sample at a time by the default loader."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

if __name__ == "__main__":
    torch.manual_seed(0)
    features = torch.randn(1024, 16)
    labels = (features[:, :2].sum(dim=1) > 0).long()
    loader = DataLoader(TensorDataset(features, labels), batch_size=64, shuffle=True)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(2):
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
