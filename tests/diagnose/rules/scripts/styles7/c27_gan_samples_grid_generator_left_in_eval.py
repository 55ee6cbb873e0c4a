"""A DCGAN-like GAN on 1-D signals (the generator and discriminator are Conv1d stacks with
BatchNorm), two optimizers, and a `save_samples(generator)` helper called every 40 iterations
that switches the generator to eval mode to draw a fixed-noise grid.

Planted: `save_samples` calls `generator.eval()` and never restores training mode, so after the
first sample grid the generator trains with its BatchNorm layers in eval mode. --fixed: it
restores the previous mode.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
Z, L = 16, 64


def generator():
    return nn.Sequential(
        nn.Linear(Z, 32 * 16), nn.Unflatten(1, (32, 16)), nn.BatchNorm1d(32), nn.ReLU(),
        nn.Upsample(scale_factor=2), nn.Conv1d(32, 16, 3, padding=1), nn.BatchNorm1d(16),
        nn.ReLU(), nn.Upsample(scale_factor=2), nn.Conv1d(16, 1, 3, padding=1), nn.Tanh(),
    )


def discriminator():
    return nn.Sequential(
        nn.Conv1d(1, 16, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv1d(16, 32, 4, 2, 1),
        nn.BatchNorm1d(32), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(32 * 16, 1),
    )


def real_signals(n, g):
    phase = torch.rand(n, 1, generator=g) * 6.28
    t = torch.linspace(0, 6.28, L)
    return torch.sin(t * 2 + phase)[:, None]


def save_samples(gen, noise, it):
    was_training = gen.training
    gen.eval()
    with torch.no_grad():
        grid = gen(noise)
    print(f"iter {it}: sample mean {grid.mean():.3f} std {grid.std():.3f}")
    if FIXED:
        gen.train(was_training)


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    gen, disc = generator(), discriminator()
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    fixed_noise = torch.randn(16, Z)
    for it in range(400):
        real = real_signals(64, g)
        fake = gen(torch.randn(64, Z))
        d_loss = bce(disc(real), torch.ones(64, 1)) + bce(disc(fake.detach()), torch.zeros(64, 1))
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = bce(disc(fake), torch.ones(64, 1))
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        if it % 40 == 0:
            save_samples(gen, fixed_noise, it)
