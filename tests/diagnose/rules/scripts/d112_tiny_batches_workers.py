"""The official CIFAR tutorial's loader: a custom Dataset over tensors in memory, batch_size=4,
num_workers=2. Every 4-sample batch is pickled and passed between processes."""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class InMemoryImages(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 3, 16, 16)
        self.y = torch.randint(0, 10, (n,))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def main():
    torch.manual_seed(0)
    loader = DataLoader(InMemoryImages(4000), batch_size=4, shuffle=True, num_workers=2)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 16 * 16, 32), nn.ReLU(), nn.Linear(32, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
