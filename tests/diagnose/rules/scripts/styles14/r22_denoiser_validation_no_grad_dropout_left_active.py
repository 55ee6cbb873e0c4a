"""A DDPM-like denoising MLP on 2-D "swiss roll" points with a time embedding and Dropout; after
every epoch a validation pass measures the noise-prediction error on held-out points at fixed
diffusion steps, under `torch.no_grad()`.

Planted: validation never calls `model.eval()`: Dropout stays active, so the validation error is
noisy and biased (and the best-epoch choice with it).
--fixed: `model.eval()` before the validation pass and `model.train()` after it.
"""

import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
T = 100


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.temb = nn.Embedding(T, 64)
        self.net = nn.Sequential(
            nn.Linear(2 + 64, 256),
            nn.ReLU(),
            nn.Dropout(0.3),
            nn.Linear(256, 256),
            nn.ReLU(),
            nn.Dropout(0.3),
            nn.Linear(256, 2),
        )

    def forward(self, x, t):
        return self.net(torch.cat([x, self.temb(t)], 1))


def swiss_roll(n, g):
    angle = 1.5 * math.pi * (1 + 2 * torch.rand(n, generator=g))
    return torch.stack([angle * angle.cos(), angle * angle.sin()], 1) / 10


def noisy(x0, t, alpha_bar, noise):
    a = alpha_bar[t][:, None]
    return a.sqrt() * x0 + (1 - a).sqrt() * noise


if __name__ == "__main__":
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    alpha_bar = torch.cumprod(1 - torch.linspace(1e-4, 0.05, T), 0)
    train, val = swiss_roll(16384, g), swiss_roll(4096, g)
    val_t = torch.arange(len(val)) % T
    val_noise = torch.randn(val.shape, generator=g)
    model = Denoiser()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(4):
        for idx in torch.randperm(len(train)).split(256):
            t = torch.randint(0, T, (len(idx),))
            noise = torch.randn(len(idx), 2)
            loss = nn.functional.mse_loss(model(noisy(train[idx], t, alpha_bar, noise), t), noise)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if FIXED:
            model.eval()
        with torch.no_grad():
            pred = model(noisy(val, val_t, alpha_bar, val_noise), val_t)
            val_loss = nn.functional.mse_loss(pred, val_noise)
        if FIXED:
            model.train()
        print("epoch", epoch, float(loss), float(val_loss))
