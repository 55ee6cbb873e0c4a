"""Clean: a DDPM-like denoiser (a small conv net with a sinusoidal time embedding) on 16x16
images, the schedule precomputed once, float32, one backward per step, no checkpointing.
`--fixed` changes nothing.
"""

import math

import torch
from torch import nn


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.temb = nn.Sequential(nn.Linear(32, 64), nn.SiLU())
        self.conv_in = nn.Conv2d(3, 64, 3, padding=1)
        self.mid = nn.Conv2d(64, 64, 3, padding=1)
        self.conv_out = nn.Conv2d(64, 3, 3, padding=1)

    def forward(self, x, t):
        freqs = torch.exp(-math.log(10000) * torch.arange(16) / 16)
        emb = self.temb(torch.cat([(t[:, None] * freqs).sin(), (t[:, None] * freqs).cos()], 1))
        h = torch.relu(self.conv_in(x)) + emb[:, :, None, None]
        return self.conv_out(torch.relu(self.mid(h)))


if __name__ == "__main__":
    torch.manual_seed(0)
    alpha_bar = torch.cumprod(1 - torch.linspace(1e-4, 0.02, 500), 0)
    images = torch.tanh(torch.randn(2048, 3, 16, 16).cumsum(3) / 4)
    model = Denoiser()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    for epoch in range(2):
        for idx in torch.randperm(len(images)).split(64):
            x0 = images[idx]
            t = torch.randint(0, 500, (len(x0),))
            noise = torch.randn_like(x0)
            a = alpha_bar[t][:, None, None, None]
            loss = nn.functional.mse_loss(
                model(a.sqrt() * x0 + (1 - a).sqrt() * noise, t.float()), noise
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
