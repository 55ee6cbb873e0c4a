"""A DDPM-like denoiser: a small U-Net with a sinusoidal time embedding predicts the noise added
to 32x32 images at a random diffusion step (the usual linear beta schedule).

Planted: every down and up block runs under `torch.utils.checkpoint.checkpoint` ("diffusion
models need memory"): each block's forward runs twice per step, though the batch's activations
are a few megabytes on a machine with gigabytes free.
--fixed: the blocks run directly.
"""

import math
import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

FIXED = "--fixed" in sys.argv


def time_embedding(t, dim=32):
    freqs = torch.exp(-math.log(10000) * torch.arange(dim // 2) / (dim // 2))
    angles = t[:, None].float() * freqs[None]
    return torch.cat([angles.sin(), angles.cos()], 1)


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.temb = nn.Linear(32, cout)

    def forward(self, x, emb):
        h = torch.relu(self.conv1(x)) + self.temb(emb)[:, :, None, None]
        return torch.relu(self.conv2(h))


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down1, self.down2 = Block(3, 32), Block(32, 64)
        self.mid = Block(64, 64)
        self.up2, self.up1 = Block(128, 32), Block(64, 32)
        self.out = nn.Conv2d(32, 3, 1)

    def run(self, block, x, emb):
        return block(x, emb) if FIXED else checkpoint(block, x, emb, use_reentrant=False)

    def forward(self, x, t):
        emb = time_embedding(t)
        d1 = self.run(self.down1, x, emb)
        d2 = self.run(self.down2, nn.functional.avg_pool2d(d1, 2), emb)
        m = self.run(self.mid, nn.functional.avg_pool2d(d2, 2), emb)
        u2 = self.run(
            self.up2, torch.cat([nn.functional.interpolate(m, scale_factor=2), d2], 1), emb
        )
        u1 = self.run(
            self.up1, torch.cat([nn.functional.interpolate(u2, scale_factor=2), d1], 1), emb
        )
        return self.out(u1)


if __name__ == "__main__":
    torch.manual_seed(0)
    steps = 200
    betas = torch.linspace(1e-4, 0.02, steps)
    alpha_bar = torch.cumprod(1 - betas, 0)
    images = torch.tanh(torch.randn(512, 3, 32, 32).cumsum(2) / 8)
    model = UNet()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    for epoch in range(2):
        for idx in torch.randperm(len(images)).split(16):
            x0 = images[idx]
            t = torch.randint(0, steps, (len(x0),))
            noise = torch.randn_like(x0)
            a = alpha_bar[t][:, None, None, None]
            loss = nn.functional.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * noise, t), noise)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
