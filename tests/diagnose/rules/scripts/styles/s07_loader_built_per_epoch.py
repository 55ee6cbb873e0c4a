"""Custom Dataset; the DataLoader (with workers) is built again inside the epoch loop.

Planted: DataLoader(num_workers=2) constructed every epoch, workers started again each time.
--fixed: built once with persistent_workers=True.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Spectra(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.signals = torch.randn(n, 128, generator=g)
        self.kind = (self.signals[:, :4].sum(1) > 0).long()

    def __len__(self):
        return len(self.signals)

    def __getitem__(self, i):
        return self.signals[i], self.kind[i]


def make_loader(ds, persistent):
    return DataLoader(ds, batch_size=64, shuffle=True, num_workers=2,
                      persistent_workers=persistent)


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    ds = Spectra(384)
    net = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    loader = make_loader(ds, persistent=True) if fixed else None
    for epoch in range(10):
        if not fixed:
            loader = make_loader(ds, persistent=False)
        for signal, kind in loader:
            opt.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(net(signal), kind).backward()
            opt.step()


if __name__ == "__main__":
    main()
