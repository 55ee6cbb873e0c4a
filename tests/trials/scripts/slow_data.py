"""Planted problem: each sample costs 4 ms to build and the DataLoader has no workers."""

import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SlowDataset(Dataset):
    def __init__(self, size=512):
        generator = torch.Generator().manual_seed(0)
        self.x = torch.randn(size, 32, generator=generator)
        self.y = torch.randint(0, 4, (size,), generator=generator)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        time.sleep(0.004)  # decoding / augmentation stand-in
        return self.x[index], self.y[index]


if __name__ == "__main__":
    loader = DataLoader(SlowDataset(), batch_size=16, shuffle=True)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(inputs), targets)
            loss.backward()
            optimizer.step()
