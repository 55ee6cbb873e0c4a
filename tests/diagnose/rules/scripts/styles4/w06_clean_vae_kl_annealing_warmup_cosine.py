"""CLEAN: a VAE with cyclical KL annealing, float32 data from NumPy (cast once), a warmup+cosine
schedule and a per-epoch reconstruction check under no_grad in eval mode. Nothing is planted
(`--fixed` changes nothing).
"""

import math

import numpy as np
import torch
from torch import nn


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(50, 256), nn.ReLU(), nn.Linear(256, 2 * 8))
        self.dec = nn.Sequential(nn.Linear(8, 256), nn.ReLU(), nn.Linear(256, 50))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, -1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar


def beta(step, cycle=300):
    return min(1.0, (step % cycle) / (cycle / 2))


def main():
    torch.manual_seed(0)
    data = torch.from_numpy(np.random.default_rng(0).normal(size=(8192, 50)).astype(np.float32))
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    total = 3 * 128
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 50) * 0.5 * (1 + math.cos(math.pi * s / total)))
    step = 0
    for epoch in range(3):
        for x in data[torch.randperm(len(data))].split(64):
            recon, mu, logvar = model(x)
            rec = (recon - x).pow(2).sum(1).mean()
            kl = (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1)).mean()
            loss = rec + beta(step) * kl
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
        model.eval()
        with torch.no_grad():
            err = (model(data[:1024])[0] - data[:1024]).pow(2).mean().item()
        model.train()
        print(epoch, err)


if __name__ == "__main__":
    main()
