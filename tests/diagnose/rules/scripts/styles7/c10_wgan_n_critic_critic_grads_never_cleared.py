"""WGAN-GP-style training with two optimizers and `n_critic` critic updates per generator update,
on a 2-D mixture of Gaussians (generator and critic are MLPs).

Planted: a copy-paste slip: the critic loop clears the generator's gradients
(`opt_g.zero_grad()`) instead of the critic's, so the critic's gradients are never cleared and
every critic step adds to all the earlier ones. --fixed: `opt_c.zero_grad()`.
"""

import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
Z, N_CRITIC, LAMBDA = 8, 5, 10.0


def real_batch(n, g):
    centers = torch.tensor([[math.cos(a), math.sin(a)] for a in torch.arange(8) * math.pi / 4])
    return 2 * centers[torch.randint(0, 8, (n,), generator=g)] + 0.05 * torch.randn(n, 2, generator=g)


def mlp(i, o):
    return nn.Sequential(nn.Linear(i, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, o))


def gradient_penalty(critic, real, fake):
    a = torch.rand(len(real), 1)
    mix = (a * real + (1 - a) * fake).requires_grad_(True)
    (grad,) = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    gen, critic = mlp(Z, 2), mlp(2, 1)
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.5, 0.9))
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))
    for it in range(200):
        for _ in range(N_CRITIC):
            real = real_batch(256, g)
            fake = gen(torch.randn(256, Z)).detach()
            loss_c = critic(fake).mean() - critic(real).mean()
            loss_c = loss_c + LAMBDA * gradient_penalty(critic, real, fake)
            (opt_c if FIXED else opt_g).zero_grad()
            loss_c.backward()
            opt_c.step()
        loss_g = -critic(gen(torch.randn(256, Z))).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
        if it % 50 == 0:
            print(it, float(loss_c), float(loss_g))
