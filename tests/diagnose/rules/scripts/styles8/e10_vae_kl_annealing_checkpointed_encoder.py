"""A variational autoencoder on synthetic 28x28 "digits" with KL annealing: the KL weight rises
linearly from 0 to 1 over the first epoch (`beta = min(1, step / warmup)`); the reparameterised
sample, a Bernoulli decoder, the ELBO split into reconstruction and KL for the log.

Planted: the author wraps the encoder and decoder blocks in `torch.utils.checkpoint` ("VAEs use a
lot of memory") on a model and batch that use a few MiB, so each backward re-runs the forwards
for nothing. --fixed: plain calls.
"""

import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

FIXED = "--fixed" in sys.argv


class VAE(nn.Module):
    def __init__(self, latent=16):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU())
        self.mu, self.logvar = nn.Linear(256, latent), nn.Linear(256, latent)
        self.dec = nn.Sequential(
            nn.Linear(latent, 256), nn.ReLU(), nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 784)
        )

    def run(self, block, x):
        return block(x) if FIXED else checkpoint(block, x, use_reentrant=False)

    def forward(self, x):
        h = self.run(self.enc, x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.run(self.dec, z), mu, logvar


def fake_digits(n, g):
    centers = torch.rand(10, 784, generator=g)
    labels = torch.randint(0, 10, (n,), generator=g)
    return (centers[labels] + 0.2 * torch.rand(n, 784, generator=g) > 0.8).float()


if __name__ == "__main__":
    torch.manual_seed(0)
    x = fake_digits(12000, torch.Generator().manual_seed(0))
    vae = VAE()
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    warmup, step = len(x) // 64, 0
    for epoch in range(2):
        for batch in x[torch.randperm(len(x))].split(64):
            logits, mu, logvar = vae(batch)
            recon = nn.functional.binary_cross_entropy_with_logits(
                logits, batch, reduction="sum"
            ) / len(batch)
            kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1).mean()
            beta = min(1.0, step / warmup)
            loss = recon + beta * kl
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
        print(f"epoch {epoch} recon {recon.item():.1f} kl {kl.item():.2f} beta {beta:.2f}")
