"""A Siamese network for signature-like verification: a Dataset that returns a pair of samples
and whether they come from the same writer (positives and negatives balanced), a shared encoder,
and a contrastive margin loss on the pair's distance; the equal-error threshold printed per
epoch.

Planted: pairs are loaded 4 at a time through two DataLoader workers ("small batches
generalise better"), so each step waits for a tiny batch to be handed over from a worker.
--fixed: batches of 128 pairs (the same workers).
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Pairs(Dataset):
    def __init__(self, writers=50, per_writer=40, dim=64):
        g = torch.Generator().manual_seed(0)
        style = torch.randn(writers, dim, generator=g)
        self.samples = style.repeat_interleave(per_writer, 0) + 0.6 * torch.randn(
            writers * per_writer, dim, generator=g
        )
        self.writer = torch.arange(writers).repeat_interleave(per_writer)
        self.by_writer = [list(range(w * per_writer, (w + 1) * per_writer)) for w in range(writers)]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        w = int(self.writer[i])
        if random.random() < 0.5:
            j, same = random.choice(self.by_writer[w]), 1.0
        else:
            other = random.choice([k for k in range(len(self.by_writer)) if k != w])
            j, same = random.choice(self.by_writer[other]), 0.0
        return self.samples[i], self.samples[j], torch.tensor(same)


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(
        Pairs(),
        batch_size=128 if FIXED else 4,
        shuffle=True,
        num_workers=2,
        persistent_workers=True,
    )
    encoder = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 32))
    opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)
    for epoch in range(2):
        for a, b, same in loader:
            d = (encoder(a) - encoder(b)).norm(dim=1)
            loss = (same * d.pow(2) + (1 - same) * (1.0 - d).clamp(min=0).pow(2)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
