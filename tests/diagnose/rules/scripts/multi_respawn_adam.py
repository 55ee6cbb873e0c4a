"""Two problems, each with a run-time fix: DataLoader workers started afresh every (short) epoch,
and Adam's default per-tensor step over a deep narrow model."""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Jittered(Dataset):
    """Features with a little noise added per sample (augmentation)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] + 0.01 * torch.randn(self.x.shape[1]), self.y[i]


def main():
    torch.manual_seed(0)
    x, y = torch.randn(512, 32), torch.randint(0, 2, (512,))
    loader = DataLoader(Jittered(x, y), batch_size=64, shuffle=True, num_workers=2)
    layers = []
    for _ in range(12):
        layers += [nn.Linear(32, 32), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(32, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(5):
        for features, labels in loader:
            loss = nn.functional.cross_entropy(model(features), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
