"""A conditional GAN written as a `GANTrainer` class with `discriminator_step()` and
`generator_step()` methods sharing `self.fake`. The discriminator step scores `self.fake`
without detaching it, so its backward also runs through the generator; to let the generator
step reuse `self.fake`, the author passes `retain_graph=True`.

Planted: the discriminator's backward walks (and writes gradients into) the generator, and the
generator's graph is kept for a second backward. --fixed: the discriminator scores
`self.fake.detach()`, no retain_graph.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
Z, CLASSES, DIM = 16, 10, 48


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.label = nn.Embedding(CLASSES, 16)
        self.net = nn.Sequential(nn.Linear(Z + 16, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                                 nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, DIM), nn.Tanh())

    def forward(self, z, y):
        return self.net(torch.cat([z, self.label(y)], 1))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.label = nn.Embedding(CLASSES, 16)
        self.net = nn.Sequential(nn.Linear(DIM + 16, 128), nn.LeakyReLU(0.2), nn.Linear(128, 1))

    def forward(self, x, y):
        return self.net(torch.cat([x, self.label(y)], 1))


class GANTrainer:
    def __init__(self):
        self.G, self.D = Generator(), Discriminator()
        self.opt_g = torch.optim.Adam(self.G.parameters(), 2e-4, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.D.parameters(), 2e-4, betas=(0.5, 0.999))
        self.bce = nn.BCEWithLogitsLoss()
        self.fake = None

    def discriminator_step(self, real, labels):
        self.fake = self.G(torch.randn(len(real), Z), labels)
        fake_in = self.fake.detach() if FIXED else self.fake
        ones, zeros = torch.ones(len(real), 1), torch.zeros(len(real), 1)
        loss = self.bce(self.D(real, labels), ones) + self.bce(self.D(fake_in, labels), zeros)
        self.opt_d.zero_grad()
        loss.backward(retain_graph=not FIXED)
        self.opt_d.step()
        return loss

    def generator_step(self, labels):
        loss = self.bce(self.D(self.fake, labels), torch.ones(len(labels), 1))
        self.opt_g.zero_grad()
        loss.backward()
        self.opt_g.step()
        return loss

    def fit(self, data, labels, epochs=2):
        for epoch in range(epochs):
            for idx in torch.randperm(len(data)).split(64):
                d_loss = self.discriminator_step(data[idx], labels[idx])
                g_loss = self.generator_step(labels[idx])
            print(epoch, d_loss.item(), g_loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    labels = torch.randint(0, CLASSES, (8192,))
    data = torch.tanh(torch.randn(8192, DIM) + labels[:, None] * 0.2)
    GANTrainer().fit(data, labels)
