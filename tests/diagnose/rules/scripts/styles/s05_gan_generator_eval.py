"""A small GAN; the generator is put in eval() to draw samples and stays there for its own step.

Planted: gen.eval() before the discriminator step, never gen.train(): the generator (BatchNorm,
Dropout) is trained in eval mode. --fixed: the generator stays in train mode.
"""

import argparse

import torch
from torch import nn


def make_generator(z_dim):
    return nn.Sequential(nn.Linear(z_dim, 128), nn.BatchNorm1d(128), nn.LeakyReLU(0.2),
                         nn.Dropout(0.1), nn.Linear(128, 32))


def make_critic():
    return nn.Sequential(nn.Linear(32, 128), nn.LeakyReLU(0.2), nn.Linear(128, 1))


def real_batch(n):
    centers = torch.randn(4, 32) * 3
    return centers[torch.randint(0, 4, (n,))] + 0.1 * torch.randn(n, 32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=400)
    ap.add_argument("--fixed", action="store_true")
    opts = ap.parse_args()
    torch.manual_seed(0)
    z_dim = 16
    gen, critic = make_generator(z_dim), make_critic()
    g_opt = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    d_opt = torch.optim.Adam(critic.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    for it in range(opts.iters):
        real = real_batch(64)
        if not opts.fixed:
            gen.eval()  # "sampling only": but nothing puts it back
        fake = gen(torch.randn(64, z_dim))
        d_loss = bce(critic(real), torch.ones(64, 1)) + bce(critic(fake.detach()), torch.zeros(64, 1))
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()

        g_loss = bce(critic(fake), torch.ones(64, 1))
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()


if __name__ == "__main__":
    main()
