"""A data pipeline configured from a dict whose values may be "auto": `resolve(cfg)` turns
`"workers": "auto"` into a number. The dataset renders small procedural textures (sums of
random sinusoids) per sample for a texture classifier.

Planted: "auto" resolves to `os.cpu_count()`: as many loader workers as the machine has cores,
so the workers compete with the training process (and each other) for every core. --fixed:
"auto" resolves to `os.cpu_count() - 1` (at least 1), a core left to training.
"""

import os
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
CFG = {"workers": "auto", "batch": 32, "epochs": 3}


def resolve(cfg):
    out = dict(cfg)
    if out["workers"] == "auto":
        cores = os.cpu_count() or 1
        out["workers"] = max(1, cores - 1) if FIXED else cores
    return out


class Textures(Dataset):
    def __len__(self):
        return 1500

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        label = i % 4
        grid = torch.linspace(0, 6.28, 48)
        img = torch.zeros(48, 48)
        for _ in range(16):
            f = (label + 1) * torch.rand(2, generator=g) * 3
            img += torch.sin(
                f[0] * grid[:, None] + f[1] * grid[None, :] + torch.rand(1, generator=g)
            )
        return img[None], label


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = resolve(CFG)
    loader = DataLoader(
        Textures(),
        batch_size=cfg["batch"],
        shuffle=True,
        num_workers=cfg["workers"],
        persistent_workers=True,
    )
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 4),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(cfg["epochs"]):
        for img, label in loader:
            loss = nn.functional.cross_entropy(model(img), label)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
