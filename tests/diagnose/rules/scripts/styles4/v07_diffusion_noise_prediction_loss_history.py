"""A DDPM-style noise-prediction loop on 2-D points: sample a timestep, noise the data with the
closed-form forward process, predict the noise with an MLP conditioned on t. The author keeps a
list of recent losses to print a smoothed loss, and appends the loss tensor itself.

Planted: every step's loss is kept with its autograd graph (memory grows with every step).
--fixed: the list gets loss.detach().
"""

import math
import sys

import torch
from torch import nn

T = 200
betas = torch.linspace(1e-4, 0.02, T)
alpha_bar = torch.cumprod(1 - betas, dim=0)


class Denoiser(nn.Module):
    def __init__(self, dim=2, hidden=256):
        super().__init__()
        self.t_embed = nn.Sequential(nn.Linear(16, hidden), nn.SiLU())
        self.net = nn.Sequential(nn.Linear(dim + hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, dim))

    def forward(self, x, t):
        freqs = torch.exp(-math.log(1000) * torch.arange(8) / 8)
        angles = t[:, None].float() * freqs[None]
        emb = self.t_embed(torch.cat([angles.sin(), angles.cos()], dim=1))
        return self.net(torch.cat([x, emb], dim=1))


def two_moons(n):
    a = torch.rand(n) * math.pi
    upper = torch.stack([a.cos(), a.sin()], 1)
    lower = torch.stack([1 - a.cos(), 0.5 - a.sin()], 1)
    return torch.cat([upper, lower])[torch.randperm(2 * n)] + 0.05 * torch.randn(2 * n, 2)


def main():
    torch.manual_seed(0)
    keep_graph = "--fixed" not in sys.argv
    model = Denoiser()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    data = two_moons(32768)
    recent = []
    for step, x0 in enumerate(data.split(256)):
        t = torch.randint(0, T, (len(x0),))
        noise = torch.randn_like(x0)
        ab = alpha_bar[t][:, None]
        xt = ab.sqrt() * x0 + (1 - ab).sqrt() * noise
        loss = nn.functional.mse_loss(model(xt, t), noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
        recent.append(loss if keep_graph else loss.detach())
        if step % 40 == 0:
            print(f"step {step} smoothed loss {torch.stack(recent[-40:]).mean().item():.4f}")


if __name__ == "__main__":
    main()
