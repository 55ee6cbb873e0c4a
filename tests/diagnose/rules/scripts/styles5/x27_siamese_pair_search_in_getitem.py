"""A siamese network with a contrastive loss. The pair Dataset's `__getitem__` picks a partner
for sample i: half the time one of the same class, half a different one. It finds candidates by
scanning the whole label list in Python each time (`[j for j, l in enumerate(self.labels) if
l == label]`).

Planted: a Python scan over all 6000 labels per sample, in the training process. --fixed: the
indices of each class are grouped once in __init__.
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class PairDataset(Dataset):
    def __init__(self, n=6000, classes=10):
        g = torch.Generator().manual_seed(0)
        self.labels = torch.randint(0, classes, (n,), generator=g).tolist()
        self.x = torch.randn(n, 64, generator=g) + torch.tensor(self.labels)[:, None] * 0.1
        self.by_class = {}
        for j, label in enumerate(self.labels):
            self.by_class.setdefault(label, []).append(j)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        label = self.labels[i]
        same = random.random() < 0.5
        if FIXED:
            pool = self.by_class[label] if same else range(len(self.labels))
        elif same:
            pool = [j for j, l in enumerate(self.labels) if l == label]
        else:
            pool = [j for j, l in enumerate(self.labels) if l != label]
        j = random.choice(pool)
        return self.x[i], self.x[j], torch.tensor(float(self.labels[j] == label))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 32))

    def forward(self, a, b):
        return self.net(a), self.net(b)


def contrastive(za, zb, same, margin=1.0):
    d = (za - zb).norm(dim=1)
    return (same * d.pow(2) + (1 - same) * (margin - d).clamp(min=0).pow(2)).mean()


def main():
    random.seed(0)
    torch.manual_seed(0)
    model = Encoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(PairDataset(), batch_size=64, shuffle=True)
    for epoch in range(2):
        for a, b, same in loader:
            loss = contrastive(*model(a, b), same)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
