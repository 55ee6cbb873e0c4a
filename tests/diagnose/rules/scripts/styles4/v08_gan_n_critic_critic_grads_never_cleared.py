"""A WGAN (weight clipping) with two optimizers and n_critic critic updates per generator update.
The critic's inner loop clears the generator's gradients (a copy-paste slip: `g_opt.zero_grad()`)
and never the critic's, so the critic's gradients pile up across all its updates.

Planted: the critic's gradients are never cleared. --fixed: the inner loop calls c_opt.zero_grad().
"""

import sys

import torch
from torch import nn

Z, D, N_CRITIC, CLIP = 16, 32, 5, 0.01


def real_batch(n):
    return torch.randn(n, D) * 0.5 + torch.linspace(-1, 1, D)


def main():
    torch.manual_seed(0)
    fixed = "--fixed" in sys.argv
    gen = nn.Sequential(nn.Linear(Z, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                        nn.Linear(256, D))
    critic = nn.Sequential(nn.Linear(D, 256), nn.LeakyReLU(0.2), nn.Linear(256, 256),
                           nn.LeakyReLU(0.2), nn.Linear(256, 1))
    g_opt = torch.optim.RMSprop(gen.parameters(), lr=5e-5)
    c_opt = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
    for it in range(150):
        for _ in range(N_CRITIC):
            real = real_batch(64)
            fake = gen(torch.randn(64, Z)).detach()
            c_loss = critic(fake).mean() - critic(real).mean()
            (c_opt if fixed else g_opt).zero_grad()
            c_loss.backward()
            c_opt.step()
            for p in critic.parameters():
                p.data.clamp_(-CLIP, CLIP)
        g_loss = -critic(gen(torch.randn(64, Z))).mean()
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        if it % 50 == 0:
            print(it, c_loss.item(), g_loss.item())


if __name__ == "__main__":
    main()
