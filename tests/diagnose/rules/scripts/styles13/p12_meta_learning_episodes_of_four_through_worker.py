"""Few-shot episodes for a prototypical network: an `IterableDataset` yields (support, query)
pairs of feature rows; the loader has a persistent worker. Its "episode" is tiny: 4 rows.

Planted: `DataLoader(episodes, batch_size=4, num_workers=1)`: batches of 4 small samples
through a worker: each hand-over (pickling, the queue, the wake-up) costs more than the batch's
compute. --fixed: batch 256, same worker.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset

FIXED = "--fixed" in sys.argv


class Episodes(IterableDataset):
    """A stream of labelled feature rows drawn around five class centres (generated once)."""

    def __init__(self, n=40000):
        g = torch.Generator().manual_seed(0)
        self.labels = torch.randint(0, 5, (n,), generator=g)
        self.rows = torch.randn(n, 32, generator=g)
        self.rows[torch.arange(n), self.labels] += 3.0

    def __iter__(self):
        yield from zip(self.rows, self.labels.tolist())


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(
        Episodes(), batch_size=256 if FIXED else 4, num_workers=1, persistent_workers=True
    )
    encoder = nn.Sequential(
        nn.Linear(32, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 16)
    )
    protos = nn.Parameter(torch.randn(5, 16))
    opt = torch.optim.Adam([*encoder.parameters(), protos], lr=1e-3)
    for epoch in range(2):
        for x, y in loader:
            dist = torch.cdist(encoder(x), protos)
            loss = nn.functional.cross_entropy(-dist, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
