"""A small U-Net denoiser trained with a diffusion objective: a linear beta schedule over 200
timesteps, a random timestep per sample, the noised input `sqrt(a_bar) x0 + sqrt(1 - a_bar) eps`,
a sinusoidal time embedding added inside the U-Net, and an MSE on the predicted noise.

Planted: the author computes each sample's `a_bar` by multiplying the alphas up to its timestep
in a Python loop (`math.prod` over a list, sample by sample) every step. --fixed: `alphas_cumprod`
computed once and indexed by the batch's timesteps.
"""

import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
T = 200
BETAS = [1e-4 + (0.02 - 1e-4) * i / (T - 1) for i in range(T)]
ALPHAS = [1 - b for b in BETAS]
ALPHAS_CUMPROD = torch.tensor(ALPHAS).cumprod(0)


def time_embedding(t, dim=32):
    freqs = torch.exp(-math.log(1000.0) * torch.arange(dim // 2) / (dim // 2))
    angles = t.float()[:, None] * freqs[None]
    return torch.cat([angles.sin(), angles.cos()], 1)


class TinyUNet(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.down1 = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1), nn.SiLU())
        self.down2 = nn.Sequential(nn.Conv2d(ch, 2 * ch, 3, stride=2, padding=1), nn.SiLU())
        self.time = nn.Linear(32, 2 * ch)
        self.up = nn.Sequential(nn.ConvTranspose2d(2 * ch, ch, 4, stride=2, padding=1), nn.SiLU())
        self.out = nn.Conv2d(2 * ch, 1, 3, padding=1)

    def forward(self, x, t):
        h1 = self.down1(x)
        h2 = self.down2(h1) + self.time(time_embedding(t))[:, :, None, None]
        return self.out(torch.cat([self.up(h2), h1], 1))


def alpha_bar(t):
    if FIXED:
        return ALPHAS_CUMPROD[t]
    values = []
    for ti in t.tolist():
        values.append(math.prod(ALPHAS[: ti + 1]))
    return torch.tensor(values)


if __name__ == "__main__":
    torch.manual_seed(0)
    images = torch.randn(4096, 1, 16, 16).cumsum(2).cumsum(3)
    images = (images - images.mean()) / images.std()
    model = TinyUNet()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    for epoch in range(2):
        for x0 in images[torch.randperm(len(images))].split(256):
            t = torch.randint(0, T, (len(x0),))
            a = alpha_bar(t).view(-1, 1, 1, 1)
            eps = torch.randn_like(x0)
            loss = nn.functional.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * eps, t), eps)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
