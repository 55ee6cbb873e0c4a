"""DCGAN-style loop on 2-D points with two optimizers; only the generator's gradients are cleared.

Planted: opt_d.zero_grad() missing: the discriminator's gradients pile up across steps.
--fixed: both optimizers clear their gradients.
"""

import argparse

import torch
from torch import nn


class Generator(nn.Module):
    def __init__(self, z=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(z, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                                  nn.Linear(128, 2))

    def forward(self, z):
        return self.body(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 128), nn.LeakyReLU(0.2), nn.Linear(128, 128),
                                  nn.LeakyReLU(0.2), nn.Linear(128, 1))

    def forward(self, x):
        return self.body(x)


def ring(n):
    angle = torch.rand(n) * 6.2832
    return torch.stack([angle.cos(), angle.sin()], 1) * 2 + 0.05 * torch.randn(n, 2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--fixed", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(0)
    G, D = Generator(), Discriminator()
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999), foreach=True)
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999), foreach=True)
    bce = nn.BCEWithLogitsLoss()
    for step in range(args.steps):
        real = ring(128)
        fake = G(torch.randn(128, 16))
        # discriminator
        if args.fixed:
            opt_d.zero_grad()
        d_loss = bce(D(real), torch.ones(128, 1)) + bce(D(fake.detach()), torch.zeros(128, 1))
        d_loss.backward()
        opt_d.step()
        # generator
        opt_g.zero_grad()
        g_loss = bce(D(fake), torch.ones(128, 1))
        g_loss.backward()
        opt_g.step()
        if step % 200 == 0:
            print(f"step {step}: d {d_loss.item():.3f} g {g_loss.item():.3f}")


if __name__ == "__main__":
    main()
