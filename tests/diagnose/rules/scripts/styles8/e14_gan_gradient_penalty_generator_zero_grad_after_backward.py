"""A GAN with an R1-style gradient penalty on real data (a double backward through
`torch.autograd.grad(create_graph=True)`), non-saturating losses, a 2-D mixture of Gaussians as
the data; the discriminator and the generator updated alternately, one step each.

Planted: in the generator's update the author clears gradients between backward and step
(`g_loss.backward(); opt_g.zero_grad(); opt_g.step()`), so the generator's optimizer never sees a
gradient and the generator never learns. --fixed: zero_grad before backward.
"""

import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def real_batch(n, g):
    k = torch.randint(0, 8, (n,), generator=g)
    centers = torch.stack([torch.cos(k * math.pi / 4), torch.sin(k * math.pi / 4)], 1) * 2
    return centers + 0.05 * torch.randn(n, 2, generator=g)


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    gen = nn.Sequential(
        nn.Linear(8, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 2)
    )
    disc = nn.Sequential(
        nn.Linear(2, 128),
        nn.LeakyReLU(0.2),
        nn.Linear(128, 128),
        nn.LeakyReLU(0.2),
        nn.Linear(128, 1),
    )
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.99))
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.99))
    for it in range(600):
        real = real_batch(128, g).requires_grad_(True)
        fake = gen(torch.randn(128, 8))
        d_real = disc(real)
        (grad_real,) = torch.autograd.grad(d_real.sum(), real, create_graph=True)
        r1 = grad_real.pow(2).sum(1).mean()
        d_loss = (
            nn.functional.softplus(-d_real).mean()
            + nn.functional.softplus(disc(fake.detach())).mean()
            + 5.0 * r1
        )
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()

        g_loss = nn.functional.softplus(-disc(gen(torch.randn(128, 8)))).mean()
        if FIXED:
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
        else:
            g_loss.backward()
            opt_g.zero_grad()
            opt_g.step()
        if it % 500 == 0:
            print(it, d_loss.item(), g_loss.item())
