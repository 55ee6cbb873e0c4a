"""A VAE whose KL weight is adapted to a target KL ("KL control"): the controller keeps the
KL terms of every step so far and steers beta by the running mean of them.

Planted: the controller stores the KL tensors themselves (`self.kls.append(kl)`), each holding
its step's graph through the encoder: memory grows with every step.
--fixed: it stores `kl.item()` (a Python float).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class KLController:
    def __init__(self, target=5.0):
        self.target, self.beta, self.kls = target, 1.0, []

    def update(self, kl):
        self.kls.append(kl.item() if FIXED else kl)
        recent = self.kls[-50:]
        mean = sum(float(k) for k in recent) / len(recent)
        self.beta *= 1.01 if mean > self.target else 0.99
        return self.beta


if __name__ == "__main__":
    torch.manual_seed(0)
    data = (torch.rand(8192, 784) < 0.2).float()
    enc = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 64))
    dec = nn.Sequential(nn.Linear(32, 512), nn.ReLU(), nn.Linear(512, 784))
    opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=1e-3)
    control = KLController()
    for epoch in range(3):
        for idx in torch.randperm(len(data)).split(64):
            x = data[idx]
            mu, logvar = enc(x).chunk(2, 1)
            z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
            recon = nn.functional.binary_cross_entropy_with_logits(
                dec(z), x, reduction="sum"
            ) / len(x)
            kl = -0.5 * torch.sum(1 + logvar - mu**2 - logvar.exp()) / len(x)
            beta = control.update(kl)
            loss = recon + beta * kl
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss), beta)
