"""A VAE on synthetic 28x28 'images', configured by a dict; the ELBO on the held-out set is
computed at the configured interval.

Planted: config["eval_every"] = 1: the whole held-out set is evaluated after every step.
--fixed: eval_every = 200 (a few times per run).
"""

import sys

import torch
import torch.nn.functional as F
from torch import nn

CONFIG = {
    "latent": 16,
    "hidden": 400,
    "batch_size": 100,
    "lr": 1e-3,
    "epochs": 3,
    "eval_every": 200 if "--fixed" in sys.argv else 1,
}


class VAE(nn.Module):
    def __init__(self, hidden, latent):
        super().__init__()
        self.enc = nn.Linear(784, hidden)
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.dec1 = nn.Linear(latent, hidden)
        self.dec2 = nn.Linear(hidden, 784)

    def forward(self, x):
        h = F.relu(self.enc(x))
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return torch.sigmoid(self.dec2(F.relu(self.dec1(z)))), mu, logvar


def elbo_loss(recon, x, mu, logvar):
    bce = F.binary_cross_entropy(recon, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (bce + kld) / x.size(0)


@torch.no_grad()
def evaluate(model, data):
    model.eval()
    total = torch.zeros(())
    for x in data.split(500):
        recon, mu, logvar = model(x)
        total += elbo_loss(recon, x, mu, logvar)
    model.train()
    return total / (len(data) / 500)


def main(cfg):
    torch.manual_seed(0)
    data = torch.rand(6000, 784).round()
    train, held_out = data[:2000], data[2000:]
    model = VAE(cfg["hidden"], cfg["latent"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"], foreach=True)
    step = 0
    for epoch in range(cfg["epochs"]):
        for x in train[torch.randperm(len(train))].split(cfg["batch_size"]):
            recon, mu, logvar = model(x)
            loss = elbo_loss(recon, x, mu, logvar)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % cfg["eval_every"] == 0:
                held = evaluate(model, held_out)
        print(f"epoch {epoch}: train {loss.item():.2f}")


if __name__ == "__main__":
    main(CONFIG)
