"""CLEAN: WGAN-GP. The gradient penalty differentiates the critic's output with respect to its
input with create_graph=True (a deliberate double backward); the generator is updated every
fifth critic step; grads are cleared with set_to_none. Nothing is planted (`--fixed` changes
nothing).
"""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    gen = nn.Sequential(nn.Linear(16, 128), nn.ReLU(), nn.Linear(128, 32))
    critic = nn.Sequential(nn.Linear(32, 128), nn.LeakyReLU(0.2), nn.Linear(128, 128),
                           nn.LeakyReLU(0.2), nn.Linear(128, 1))
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.0, 0.9))
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
    real_data = torch.randn(12800, 32) * 0.5 + 1.0
    for epoch in range(3):
        for i, real in enumerate(real_data.split(64)):
            fake = gen(torch.randn(len(real), 16)).detach()
            eps = torch.rand(len(real), 1)
            mixed = (eps * real + (1 - eps) * fake).requires_grad_(True)
            grad, = torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)
            penalty = ((grad.norm(2, dim=1) - 1) ** 2).mean()
            loss_c = critic(fake).mean() - critic(real).mean() + 10 * penalty
            opt_c.zero_grad(set_to_none=True)
            loss_c.backward()
            opt_c.step()
            if i % 5 == 4:
                loss_g = -critic(gen(torch.randn(64, 16))).mean()
                opt_g.zero_grad(set_to_none=True)
                loss_g.backward()
                opt_g.step()
        print(epoch, loss_c.item())


if __name__ == "__main__":
    main()
