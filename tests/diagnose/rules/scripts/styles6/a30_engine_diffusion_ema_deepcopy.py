"""An engine module for diffusion training (`train_one_epoch(model, ema, ...)` and
`sample(model, n)`), an `EMA` helper class, and a small U-Net-like denoiser on 16x16
two-channel fields (a PDE-surrogate style dataset of Gaussian bumps).

Planted: the EMA helper's `update()` rebuilds the shadow model with `copy.deepcopy(model)` and
then blends its parameters, every step. --fixed: the shadow is copied once and blended in place.
"""

import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
T = 100


class EMA:
    def __init__(self, model, decay=0.999):
        self.decay = decay
        self.shadow = copy.deepcopy(model).eval().requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        if not FIXED:
            old = self.shadow
            self.shadow = copy.deepcopy(model).eval().requires_grad_(False)
            for s, o in zip(self.shadow.parameters(), old.parameters()):
                s.lerp_(o, self.decay)
        else:
            for s, p in zip(self.shadow.parameters(), model.parameters()):
                s.lerp_(p, 1 - self.decay)


class Denoiser(nn.Module):
    def __init__(self, ch=48):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(3, ch, 3, padding=1), nn.SiLU(),
                                  nn.Conv2d(ch, ch, 3, 2, 1), nn.SiLU())
        self.mid = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.SiLU())
        self.up = nn.Sequential(nn.ConvTranspose2d(ch, ch, 4, 2, 1), nn.SiLU(),
                                nn.Conv2d(ch, 2, 3, padding=1))

    def forward(self, x, t):
        tmap = (t.float() / T)[:, None, None, None].expand(len(x), 1, *x.shape[2:])
        return self.up(self.mid(self.down(torch.cat([x, tmap], 1))))


def train_one_epoch(model, ema, opt, data, abar):
    model.train()
    for i, idx in enumerate(torch.randperm(len(data)).split(32)):
        x0 = data[idx]
        t = torch.randint(0, T, (len(x0),))
        a = abar[t][:, None, None, None]
        noise = torch.randn_like(x0)
        loss = nn.functional.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * noise, t), noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema.update(model)
        if i % 50 == 0:
            print(i, loss.item())


def main():
    torch.manual_seed(0)
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    c = torch.rand(2048, 2, 2) * 16
    data = torch.stack([torch.exp(-((xx - c[:, k, 0, None, None]) ** 2 +
                                    (yy - c[:, k, 1, None, None]) ** 2) / 6) for k in range(2)],
                       1)
    abar = torch.cumprod(1 - torch.linspace(1e-4, 0.02, T), 0)
    model = Denoiser()
    ema = EMA(model)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4)
    for epoch in range(2):
        train_one_epoch(model, ema, opt, data, abar)


if __name__ == "__main__":
    main()
