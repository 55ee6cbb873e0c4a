"""CLEAN: WGAN-GP with two optimizers and five critic updates per generator update on a 2-D
Gaussian mixture; each optimizer clears its own gradients before its backward; losses printed
every 50 iterations. Nothing is planted (`--fixed` changes nothing).
"""

import math

import torch
from torch import nn

Z, N_CRITIC = 8, 5


def mlp(i, o):
    return nn.Sequential(nn.Linear(i, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, o))


def real_batch(n, g):
    angles = torch.randint(0, 8, (n,), generator=g) * math.pi / 4
    centers = torch.stack([angles.cos(), angles.sin()], 1)
    return 2 * centers + 0.05 * torch.randn(n, 2, generator=g)


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
            a = torch.rand(256, 1)
            mix = (a * real + (1 - a) * fake).requires_grad_(True)
            (grad,) = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)
            gp = ((grad.norm(dim=1) - 1) ** 2).mean()
            loss_c = critic(fake).mean() - critic(real).mean() + 10 * gp
            opt_c.zero_grad()
            loss_c.backward()
            opt_c.step()
        loss_g = -critic(gen(torch.randn(256, Z))).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
        if it % 50 == 0:
            print(it, loss_c.item(), loss_g.item())
