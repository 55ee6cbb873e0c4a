"""A Hydra-like nested configuration (`cfg["data"]["loader"]["num_workers"]`, merged from a base
dict and an "override" dict the way a config system composes files), an image dataset that
augments each sample (random crop, flip, colour jitter, noise) with torch ops in `__getitem__`,
and a small CNN.

Planted: the base config's `num_workers: 0` survives the merge (the override puts
`workers: 2` under `data`, where nothing reads it): every batch is augmented in the training process between steps.
--fixed: the override sets `num_workers: 1` with persistent workers.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
BASE = {
    "data": {"loader": {"batch_size": 32, "num_workers": 0, "persistent_workers": False}},
    "optim": {"lr": 1e-3},
}
OVERRIDE = (
    {"data": {"loader": {"num_workers": 1, "persistent_workers": True}}}
    if FIXED
    else {"data": {"workers": 2}}
)


def merge(base, over):
    out = dict(base)
    for key, value in over.items():
        out[key] = merge(base[key], value) if isinstance(value, dict) and key in base else value
    return out


class Augmenting(Dataset):
    def __init__(self, n=2048):
        g = torch.Generator().manual_seed(0)
        self.images = torch.rand(n, 3, 40, 40, generator=g)
        self.labels = torch.randint(0, 10, (n,), generator=g)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        img = self.images[i]
        for _ in range(6):  # an augmentation pipeline of several passes
            top, left = torch.randint(0, 9, (2,)).tolist()
            img = nn.functional.pad(img[:, top : top + 32, left : left + 32], (4, 4, 4, 4))
            if torch.rand(()) < 0.5:
                img = img.flip(2)
            img = (img * (0.8 + 0.4 * torch.rand(3, 1, 1)) + 0.02 * torch.randn_like(img)).clamp(
                0, 1
            )
        return img[:, 4:36, 4:36], self.labels[i]


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = merge(BASE, OVERRIDE)
    loader = DataLoader(Augmenting(), shuffle=True, **cfg["data"]["loader"])
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 10),
    )
    opt = torch.optim.Adam(model.parameters(), **cfg["optim"])
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
