"""A VAE on tabular data with KL annealing (beta ramps from 0 to 1 over the first epochs). The
data come from NumPy (float64 by default) through torch.from_numpy, and the author makes the model
match the data with `model.to(data.dtype)` instead of casting the data.

Planted: the whole model and every step run in float64. --fixed: the NumPy array is cast to
float32 before it becomes a tensor.
"""

import sys

import numpy as np
import torch
from torch import nn


class VAE(nn.Module):
    def __init__(self, d_in=64, d_hidden=384, d_latent=16):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, d_hidden), nn.ReLU(),
                                 nn.Linear(d_hidden, d_hidden), nn.ReLU())
        self.mu, self.logvar = nn.Linear(d_hidden, d_latent), nn.Linear(d_hidden, d_latent)
        self.dec = nn.Sequential(nn.Linear(d_latent, d_hidden), nn.ReLU(),
                                 nn.Linear(d_hidden, d_hidden), nn.ReLU(),
                                 nn.Linear(d_hidden, d_in))

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(z), mu, logvar


def kl_weight(step, warmup_steps):
    return min(1.0, step / warmup_steps)


def main():
    rng = np.random.default_rng(0)
    table = rng.normal(size=(8192, 64))
    if "--fixed" in sys.argv:
        table = table.astype(np.float32)
    data = torch.from_numpy(table)
    model = VAE().to(data.dtype)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = 0
    for epoch in range(4):
        perm = torch.randperm(len(data))
        for idx in perm.split(128):
            x = data[idx]
            recon, mu, logvar = model(x)
            rec = nn.functional.mse_loss(recon, x, reduction="sum") / len(x)
            kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / len(x)
            loss = rec + kl_weight(step, 200) * kl
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
        print(f"epoch {epoch} elbo {loss.item():.2f}")


if __name__ == "__main__":
    main()
