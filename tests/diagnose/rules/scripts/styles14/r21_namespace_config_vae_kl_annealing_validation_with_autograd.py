"""A VAE with KL annealing (the KL weight rises linearly over the first epochs); the
configuration is `argparse.Namespace(**json.loads(...))`. After every epoch the ELBO is
computed on a held-out set as large as the training set.

Planted: the validation function runs the model with autograd on (no `no_grad` /
`inference_mode`): every validation forward records a graph it never uses.
--fixed: validation under `torch.inference_mode()`.
"""

import contextlib
import json
import sys
from argparse import Namespace

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
CFG = Namespace(
    **json.loads('{"latent": 16, "hidden": 512, "epochs": 4, "anneal_epochs": 3, "lr": 1e-3}')
)


class VAE(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Linear(784, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, 2 * cfg.latent)
        )
        self.dec = nn.Sequential(
            nn.Linear(cfg.latent, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, 784)
        )

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        recon = nn.functional.binary_cross_entropy_with_logits(
            self.dec(z), x, reduction="sum"
        ) / len(x)
        kl = -0.5 * torch.sum(1 + logvar - mu**2 - logvar.exp()) / len(x)
        return recon, kl


def validate(model, data):
    model.eval()
    total = 0.0
    guard = torch.inference_mode() if FIXED else contextlib.nullcontext()
    with guard:
        for batch in data.split(256):
            recon, kl = model(batch)
            total += float(recon + kl) * len(batch)
    model.train()
    return total / len(data)


if __name__ == "__main__":
    torch.manual_seed(0)
    train = (torch.rand(4096, 784) < 0.2).float()
    val = (torch.rand(4096, 784) < 0.2).float()
    model = VAE(CFG)
    opt = torch.optim.Adam(model.parameters(), lr=CFG.lr)
    for epoch in range(CFG.epochs):
        beta = min(1.0, (epoch + 1) / CFG.anneal_epochs)
        for idx in torch.randperm(len(train)).split(128):
            recon, kl = model(train[idx])
            loss = recon + beta * kl
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss), "val", validate(model, val))
