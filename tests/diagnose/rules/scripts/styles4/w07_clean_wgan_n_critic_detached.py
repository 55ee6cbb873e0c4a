"""CLEAN: a WGAN with weight clipping, n_critic = 5 critic updates per generator update, each
optimizer clearing its own gradients, fakes detached for the critic. Nothing is planted
(`--fixed` changes nothing).
"""

import torch
from torch import nn

Z, D = 16, 32


def main():
    torch.manual_seed(0)
    gen = nn.Sequential(nn.Linear(Z, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                        nn.Linear(256, D))
    critic = nn.Sequential(nn.Linear(D, 256), nn.LeakyReLU(0.2), nn.Linear(256, 256),
                           nn.LeakyReLU(0.2), nn.Linear(256, 1))
    g_opt = torch.optim.RMSprop(gen.parameters(), lr=5e-5)
    c_opt = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
    for it in range(150):
        for _ in range(5):
            real = torch.randn(64, D) * 0.5 + 1.0
            with torch.no_grad():
                fake = gen(torch.randn(64, Z))
            c_loss = critic(fake).mean() - critic(real).mean()
            c_opt.zero_grad()
            c_loss.backward()
            c_opt.step()
            with torch.no_grad():
                for p in critic.parameters():
                    p.clamp_(-0.01, 0.01)
        g_loss = -critic(gen(torch.randn(64, Z))).mean()
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        if it % 50 == 0:
            print(it, c_loss.item(), g_loss.item())


if __name__ == "__main__":
    main()
