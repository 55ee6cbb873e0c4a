"""A DCGAN-style loop on vectors: the discriminator's fake loss is computed on the generator's
output without .detach(), so its backward walks into the generator too; the generator's update
then reuses `fake`, and the author added retain_graph=True to silence "Trying to backward through
the graph a second time".

Planted: retain_graph=True and two backward passes through the generator's graph. --fixed:
fake.detach() for the discriminator's loss, no retain_graph.
"""

import sys

import torch
from torch import nn

Z = 32


def main():
    torch.manual_seed(0)
    fixed = "--fixed" in sys.argv
    netG = nn.Sequential(nn.Linear(Z, 512), nn.BatchNorm1d(512), nn.ReLU(), nn.Linear(512, 512),
                         nn.BatchNorm1d(512), nn.ReLU(), nn.Linear(512, 64), nn.Tanh())
    netD = nn.Sequential(nn.Linear(64, 256), nn.LeakyReLU(0.2), nn.Linear(256, 1))
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    criterion = nn.BCEWithLogitsLoss()
    real_data = torch.tanh(torch.randn(16384, 64))
    ones, zeros = torch.ones(128, 1), torch.zeros(128, 1)
    for epoch in range(2):
        for real in real_data.split(128):
            fake = netG(torch.randn(128, Z))
            optD.zero_grad()
            errD_real = criterion(netD(real), ones)
            errD_fake = criterion(netD(fake.detach() if fixed else fake), zeros)
            errD = errD_real + errD_fake
            errD.backward(retain_graph=not fixed)
            optD.step()
            optG.zero_grad()
            errG = criterion(netD(fake), ones)
            errG.backward()
            optG.step()
        print(f"epoch {epoch} D {errD.item():.3f} G {errG.item():.3f}")


if __name__ == "__main__":
    main()
