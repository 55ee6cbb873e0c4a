"""Features already in memory, loaded through TensorDataset and the default DataLoader (1024
samples a batch: the per-sample fetch is most of the step, far above D108's 25% even under load)."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    features = torch.randn(20000, 64)
    labels = (features[:, :4].sum(dim=1) > 0).long()
    loader = DataLoader(TensorDataset(features, labels), batch_size=1024, shuffle=True)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(2):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
