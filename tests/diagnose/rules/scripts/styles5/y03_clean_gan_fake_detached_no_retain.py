"""CLEAN: a GAN whose generator output is computed once per step; the discriminator's loss uses
`fake.detach()` and the generator's loss reuses `fake` (its own graph, one backward through the
generator). No retain_graph. Nothing is planted (`--fixed` changes nothing). With `--retain` the
discriminator's backward keeps its graph out of habit (retain_graph=True), and nothing walks it
again: the generator's backward stops at the detached fake's other branch.
"""

import sys

import torch
from torch import nn

Z = 32


def main():
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(Z, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 64), nn.Tanh())
    D = nn.Sequential(nn.Linear(64, 256), nn.LeakyReLU(0.2), nn.Linear(256, 1))
    opt_g = torch.optim.Adam(G.parameters(), 2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), 2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    data = torch.tanh(torch.randn(8192, 64))
    ones, zeros = torch.ones(128, 1), torch.zeros(128, 1)
    for epoch in range(2):
        for real in data.split(128):
            fake = G(torch.randn(128, Z))
            d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
            opt_d.zero_grad()
            d_loss.backward(retain_graph="--retain" in sys.argv)
            opt_d.step()
            g_loss = bce(D(fake), ones)
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
        print(epoch, d_loss.item(), g_loss.item())


if __name__ == "__main__":
    main()
