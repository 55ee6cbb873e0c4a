"""Features already in memory, loaded through TensorDataset by a worker process."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    features = torch.randn(8192, 32)
    labels = (features[:, :4].sum(dim=1) > 0).long()
    loader = DataLoader(TensorDataset(features, labels), batch_size=32, shuffle=True,
                        num_workers=1, persistent_workers=True)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(2):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
