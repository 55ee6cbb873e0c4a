"""Closures instead of classes: `make_model()` returns encode/decode functions over a shared
parameter list, `make_train_step(...)` returns a `train_step(batch)` closure, and the loop only
calls `train_step`. A VAE on 64-dimensional binary "feature vectors" with a beta warm-up.

Planted: the closure built by `make_train_step` calls backward and step, but the line that
clears the gradients sits in `make_train_step` itself (run once, at construction) instead of
in `train_step`. --fixed: cleared in every call.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def make_model(dim=64, hidden=256, latent=8):
    enc = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, 2 * latent))
    dec = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, dim))

    def encode(x):
        mu, logvar = enc(x).chunk(2, -1)
        return mu, logvar

    def decode(z):
        return dec(z)

    return encode, decode, [*enc.parameters(), *dec.parameters()]


def make_train_step(encode, decode, params, warmup=300):
    opt = torch.optim.Adam(params, lr=1e-3)
    count = [0]
    opt.zero_grad()

    def train_step(x):
        if FIXED:
            opt.zero_grad()
        mu, logvar = encode(x)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        rec = nn.functional.binary_cross_entropy_with_logits(decode(z), x, reduction="sum")
        kl = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum()
        beta = min(1.0, count[0] / warmup)
        loss = (rec + beta * kl) / len(x)
        loss.backward()
        opt.step()
        count[0] += 1
        return loss.detach()

    return train_step


def main():
    torch.manual_seed(0)
    protos = (torch.rand(10, 64) < 0.3).float()
    data = protos[torch.randint(0, 10, (8192,))]
    data = (data + (torch.rand_like(data) < 0.05).float()) % 2
    train_step = make_train_step(*make_model())
    for epoch in range(3):
        losses = [train_step(data[i]) for i in torch.randperm(len(data)).split(128)]
        print(epoch, float(torch.stack(losses).mean()))


if __name__ == "__main__":
    main()
