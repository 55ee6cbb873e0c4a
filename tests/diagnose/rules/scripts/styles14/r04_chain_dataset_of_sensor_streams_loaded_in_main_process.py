"""Sensor recordings from three "sites", each an `IterableDataset` that synthesises windows
(a noisy multi-channel signal, band-limited by a moving average, standardised); the sites are
chained with `torch.utils.data.ChainDataset` and batched by a `DataLoader`.

Planted: the loader has no workers (`num_workers=0`): every window is synthesised and filtered
in the training process while the model waits.
--fixed: two persistent workers, each reading its share of every site.
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import ChainDataset, DataLoader, IterableDataset, get_worker_info

FIXED = "--fixed" in sys.argv


class Site(IterableDataset):
    def __init__(self, site, windows=1200):
        self.site, self.windows = site, windows

    def __iter__(self):
        info = get_worker_info()
        start, step = (info.id, info.num_workers) if info else (0, 1)
        rng = np.random.default_rng(self.site * 1000 + start)
        kernel = np.ones(9) / 9
        for _ in range(start, self.windows, step):
            raw = rng.standard_normal((8, 512)).cumsum(axis=1)
            smooth = np.stack([np.convolve(ch, kernel, mode="same") for ch in raw])
            smooth = (smooth - smooth.mean(1, keepdims=True)) / (
                smooth.std(1, keepdims=True) + 1e-6
            )
            label = int(smooth[0, -1] > smooth[0, 0])
            yield torch.from_numpy(smooth.astype(np.float32)), label


if __name__ == "__main__":
    torch.manual_seed(0)
    data = ChainDataset([Site(s) for s in range(3)])
    workers = dict(num_workers=2, persistent_workers=True) if FIXED else dict(num_workers=0)
    loader = DataLoader(data, batch_size=64, **workers)
    model = nn.Sequential(
        nn.Conv1d(8, 32, 7, stride=2),
        nn.ReLU(),
        nn.Conv1d(32, 32, 5, stride=2),
        nn.ReLU(),
        nn.AdaptiveAvgPool1d(1),
        nn.Flatten(),
        nn.Linear(32, 2),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
