"""Runs a full validation pass after every training step."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


@torch.no_grad()
def validate(model, loader):
    model.eval()
    total = 0.0
    for xb, yb in loader:
        total += nn.functional.cross_entropy(model(xb), yb, reduction="sum")
    model.train()
    return total / len(loader.dataset)


def main():
    torch.manual_seed(0)
    train = TensorDataset(torch.randn(4096, 48), torch.randint(0, 4, (4096,)))
    val = TensorDataset(torch.randn(2048, 48), torch.randint(0, 4, (2048,)))
    train_loader = DataLoader(train, batch_size=64, shuffle=True)
    val_loader = DataLoader(val, batch_size=256)
    model = nn.Sequential(nn.Linear(48, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 4))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for xb, yb in train_loader:
            loss = nn.functional.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            validate(model, val_loader)


if __name__ == "__main__":
    main()
