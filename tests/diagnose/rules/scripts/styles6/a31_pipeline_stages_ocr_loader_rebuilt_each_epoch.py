"""A pipeline of stages chained by a `PIPELINE = [("train", train_stage), ("export",
export_stage)]` list, each stage reading and writing a shared `ctx` dict. The train stage fits
a small glyph classifier (an OCR character recognizer) on rendered-like 20x20 glyphs; the
Dataset applies a random shift and contrast per sample.

Planted: `make_loader(ctx)` is called at the top of every epoch inside the train stage and
builds a DataLoader with 2 workers and no `persistent_workers`: the workers are started anew
for every epoch. --fixed: the loader is built once, before the epochs, with persistent workers.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Glyphs(Dataset):
    def __init__(self, n, classes=36):
        g = torch.Generator().manual_seed(0)
        self.y = torch.randint(0, classes, (n,), generator=g)
        self.base = torch.rand(classes, 1, 20, 20, generator=g).round()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        img = self.base[self.y[i]]
        shift = int(torch.randint(-2, 3, (1,)))
        img = torch.roll(img, shift, dims=2) * (0.7 + 0.6 * torch.rand(1))
        return img + 0.1 * torch.randn_like(img), self.y[i]


def make_loader(ctx):
    return DataLoader(ctx["data"], batch_size=64, shuffle=True, num_workers=2,
                      persistent_workers=FIXED)


def train_stage(ctx):
    model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(64 * 25, 36))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = make_loader(ctx) if FIXED else None
    for epoch in range(ctx["epochs"]):
        if not FIXED:
            loader = make_loader(ctx)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
    ctx["model"] = model


def export_stage(ctx):
    ctx["model"].eval()
    ctx["scripted"] = torch.jit.trace(ctx["model"], torch.zeros(1, 1, 20, 20))
    print("exported")


PIPELINE = [("train", train_stage), ("export", export_stage)]

if __name__ == "__main__":
    torch.manual_seed(0)
    ctx = {"data": Glyphs(640), "epochs": 12}
    for name, stage in PIPELINE:
        print("== stage", name)
        stage(ctx)
