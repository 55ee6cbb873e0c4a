"""Domain-mixed training: three domains' datasets (each a small `Dataset` adding its own offset
and noise) joined with `ConcatDataset`, read through two persistent workers.

Planted: the batch size is 4 ("small batches generalise better"): each batch is a few hundred
floats, and handing it over from a worker process costs more than computing it; the step is
the hand-over.
--fixed: batch size 256.
"""

import sys

import torch
from torch import nn
from torch.utils.data import ConcatDataset, DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Domain(Dataset):
    def __init__(self, offset, n=4000):
        g = torch.Generator().manual_seed(offset)
        self.x = torch.randn(n, 48, generator=g) + offset
        self.y = (self.x[:, :2].sum(1) > 2 * offset).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] + 0.01 * torch.randn(48), self.y[i]


if __name__ == "__main__":
    torch.manual_seed(0)
    data = ConcatDataset([Domain(d) for d in range(3)])
    loader = DataLoader(
        data, batch_size=256 if FIXED else 4, shuffle=True, num_workers=2, persistent_workers=True
    )
    model = nn.Sequential(
        nn.Linear(48, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 2)
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
