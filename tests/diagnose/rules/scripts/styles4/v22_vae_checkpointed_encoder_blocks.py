"""A convolutional VAE whose encoder blocks run under torch.utils.checkpoint (the author copied
the memory-saving trick from a large-model repo); on this small model and CPU memory is
plentiful, so every backward recomputes the encoder's forward for nothing.

Planted: activation checkpointing with plenty of memory. --fixed: the blocks are called directly.
"""

import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

USE_CHECKPOINT = "--fixed" not in sys.argv


class ConvVAE(nn.Module):
    def __init__(self, latent=16):
        super().__init__()
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1),
                          nn.ReLU(), nn.MaxPool2d(2)),
            nn.Sequential(nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1),
                          nn.ReLU(), nn.MaxPool2d(2)),
        ])
        self.to_stats = nn.Linear(64 * 7 * 7, 2 * latent)
        self.dec = nn.Sequential(nn.Linear(latent, 64 * 7 * 7), nn.ReLU(),
                                 nn.Unflatten(1, (64, 7, 7)),
                                 nn.ConvTranspose2d(64, 32, 2, stride=2), nn.ReLU(),
                                 nn.ConvTranspose2d(32, 1, 2, stride=2))

    def encode(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False) if USE_CHECKPOINT else block(x)
        return self.to_stats(x.flatten(1)).chunk(2, dim=1)

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar


def main():
    torch.manual_seed(0)
    images = torch.rand(1024, 1, 28, 28)
    model = ConvVAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for x in images.split(32):
            recon, mu, logvar = model(x)
            rec = nn.functional.binary_cross_entropy_with_logits(recon, x, reduction="sum")
            kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
            loss = (rec + kl) / len(x)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
