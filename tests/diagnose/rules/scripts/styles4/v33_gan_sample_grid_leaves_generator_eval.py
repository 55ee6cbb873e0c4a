"""A conditional GAN whose `save_samples()` helper puts the generator in eval mode to draw a
sample grid every 50 iterations (and returns without switching it back); the generator has
BatchNorm, so afterwards it trains with frozen running statistics.

Planted: the generator trains in eval mode after the first sample grid. --fixed: save_samples
switches the generator back to train mode.
"""

import sys

import torch
from torch import nn

Z, C, D = 16, 4, 48


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.label = nn.Embedding(C, 16)
        self.net = nn.Sequential(nn.Linear(Z + 16, 256), nn.BatchNorm1d(256), nn.ReLU(),
                                 nn.Linear(256, 256), nn.BatchNorm1d(256), nn.ReLU(),
                                 nn.Linear(256, D))

    def forward(self, z, c):
        return self.net(torch.cat([z, self.label(c)], 1))


def save_samples(gen, restore):
    gen.eval()
    with torch.no_grad():
        grid = gen(torch.randn(C * 8, Z), torch.arange(C).repeat_interleave(8))
    if restore:
        gen.train()
    return grid.mean().item()


def main():
    torch.manual_seed(0)
    restore = "--fixed" in sys.argv
    gen, disc = Generator(), nn.Sequential(nn.Linear(D + C, 256), nn.LeakyReLU(0.2),
                                           nn.Linear(256, 1))
    g_opt = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    d_opt = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    centers = torch.randn(C, D)
    for it in range(400):
        c = torch.randint(0, C, (64,))
        onehot = nn.functional.one_hot(c, C).float()
        real = centers[c] + 0.1 * torch.randn(64, D)
        fake = gen(torch.randn(64, Z), c)
        d_loss = bce(disc(torch.cat([real, onehot], 1)), torch.ones(64, 1)) + bce(
            disc(torch.cat([fake.detach(), onehot], 1)), torch.zeros(64, 1))
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()
        g_loss = bce(disc(torch.cat([fake, onehot], 1)), torch.ones(64, 1))
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        if it % 50 == 0:
            print(it, save_samples(gen, restore))


if __name__ == "__main__":
    main()
