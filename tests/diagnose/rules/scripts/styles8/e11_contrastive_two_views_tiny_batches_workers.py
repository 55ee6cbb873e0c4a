"""Contrastive learning (SimCLR-like): the dataset returns two augmented views of each sample, a
small encoder and projection head, and the NT-Xent loss over the 2N views of a batch with a
temperature; a linear probe's accuracy printed per epoch.

Planted: the batch holds 8 samples (16 views) and goes through two DataLoader workers, so every
step waits for a tiny batch to be pickled across from a worker; the hand-over, not the work,
sets the pace. --fixed: batches of 128 (the same workers).
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class TwoViews(Dataset):
    def __init__(self, n=3000, dim=48):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, dim, generator=g)

    def __len__(self):
        return len(self.x)

    def augment(self, v):
        mask = (torch.rand_like(v) > 0.2).float()
        return v * mask * torch.empty(1).uniform_(0.8, 1.2) + 0.1 * torch.randn_like(v)

    def __getitem__(self, i):
        v = self.x[i]
        return self.augment(v), self.augment(v)


def nt_xent(z1, z2, temperature=0.2):
    z = nn.functional.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.T / temperature
    sim.fill_diagonal_(float("-inf"))
    n = len(z1)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return nn.functional.cross_entropy(sim, targets)


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(
        TwoViews(),
        batch_size=128 if FIXED else 8,
        shuffle=True,
        num_workers=2,
        persistent_workers=True,
    )
    encoder = nn.Sequential(nn.Linear(48, 128), nn.ReLU(), nn.Linear(128, 64))
    projector = nn.Sequential(nn.ReLU(), nn.Linear(64, 32))
    opt = torch.optim.Adam([*encoder.parameters(), *projector.parameters()], lr=1e-3)
    for epoch in range(2):
        for v1, v2 in loader:
            loss = nt_xent(projector(encoder(v1)), projector(encoder(v2)))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
