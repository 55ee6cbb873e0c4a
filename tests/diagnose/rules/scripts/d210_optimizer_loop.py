"""An image MLP trained with AdamW's default implementation on the CPU."""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    images = torch.rand(1024, 3, 64, 64)
    labels = torch.randint(0, 6, (1024,))
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 64 * 64, 64), nn.ReLU(), nn.Linear(64, 6))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(2):
        perm = torch.randperm(len(images))
        for i in range(0, len(images), 32):
            idx = perm[i:i + 32]
            optimizer.zero_grad()
            loss = criterion(model(images[idx]), labels[idx])
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
