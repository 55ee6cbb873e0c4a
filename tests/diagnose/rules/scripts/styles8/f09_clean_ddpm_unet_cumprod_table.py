"""Clean: a DDPM-style denoiser (a two-level conv U-Net with a learned time embedding) with the
cosine noise schedule precomputed as a tensor table indexed by each batch's timesteps; a short
ancestral sampling run at the end under `torch.no_grad()`."""

import math

import torch
from torch import nn

T = 100
steps = torch.arange(T + 1) / T
f = torch.cos((steps + 0.008) / 1.008 * math.pi / 2) ** 2
ALPHA_BAR = (f[1:] / f[0]).clamp(1e-5, 1)


class UNet(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.t = nn.Embedding(T, 2 * ch)
        self.d1 = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1), nn.GELU())
        self.d2 = nn.Sequential(nn.Conv2d(ch, 2 * ch, 3, 2, 1), nn.GELU())
        self.u1 = nn.Sequential(
            nn.Upsample(scale_factor=2), nn.Conv2d(2 * ch, ch, 3, padding=1), nn.GELU()
        )
        self.out = nn.Conv2d(2 * ch, 1, 1)

    def forward(self, x, t):
        h1 = self.d1(x)
        h2 = self.d2(h1) + self.t(t)[:, :, None, None]
        return self.out(torch.cat([self.u1(h2), h1], 1))


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(4096, 1, 16, 16).cumsum(3) / 4
    model = UNet()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(2):
        for x0 in data[torch.randperm(len(data))].split(128):
            t = torch.randint(0, T, (len(x0),))
            a = ALPHA_BAR[t].view(-1, 1, 1, 1)
            eps = torch.randn_like(x0)
            loss = nn.functional.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * eps, t), eps)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
    with torch.no_grad():
        x = torch.randn(8, 1, 16, 16)
        for t in reversed(range(T)):
            a = ALPHA_BAR[t]
            eps = model(x, torch.full((8,), t))
            x0 = (x - (1 - a).sqrt() * eps) / a.sqrt()
            x = (
                a.sqrt() * x0.clamp(-3, 3) + (1 - a).sqrt() * eps
                if t == 0
                else ALPHA_BAR[t - 1].sqrt() * x0 + (1 - ALPHA_BAR[t - 1]).sqrt() * eps
            )
    print(x.std().item())
