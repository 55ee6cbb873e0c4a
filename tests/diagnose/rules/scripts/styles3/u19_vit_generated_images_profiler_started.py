"""A small Vision Transformer trained on procedurally generated images (oriented stripes); a
torch.profiler session is started with `prof.start()` in the setup and stepped every iteration
(`prof.step()`), meant for the first few steps, but never stopped.

Planted: the program's torch.profiler records every step. --fixed: no profiler.
"""

import math
import sys

import torch
from torch import nn


def stripes(n, size=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 4, (n,), generator=g)
    angle = labels.float() * math.pi / 4
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    phase = xx[None] * torch.cos(angle)[:, None, None] + yy[None] * torch.sin(angle)[:, None, None]
    images = torch.sin(phase * 0.8) + 0.3 * torch.randn(n, size, size, generator=g)
    return images[:, None], labels


class ViT(nn.Module):
    def __init__(self, patch=8, dim=64):
        super().__init__()
        self.patchify = nn.Conv2d(1, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, (32 // patch) ** 2 + 1, dim))
        layer = nn.TransformerEncoderLayer(dim, 4, dim * 2, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        tokens = self.patchify(x).flatten(2).transpose(1, 2)
        tokens = torch.cat([self.cls.expand(len(x), -1, -1), tokens], 1) + self.pos
        return self.head(self.encoder(tokens)[:, 0])


def main():
    torch.manual_seed(0)
    images, labels = stripes(4096)
    model = ViT()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    prof = None
    if "--fixed" not in sys.argv:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                      record_shapes=True)
        prof.start()
    for epoch in range(3):
        for xb, yb in zip(images.split(64), labels.split(64)):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if prof is not None:
                prof.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
