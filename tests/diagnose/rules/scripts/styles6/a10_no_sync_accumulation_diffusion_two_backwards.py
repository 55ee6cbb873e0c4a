"""Gradient accumulation written for DDP and run on one process: a `maybe_no_sync(model, sync)`
context manager (contextlib, falls back to nullcontext when the model has no `no_sync`),
4 micro-batches per optimizer step. The model is a small MLP denoiser of a DDPM on 2-D
"swiss roll" points (sinusoidal time embedding, cosine noise schedule).

Planted: the author adds an x0-reconstruction loss to the noise loss by calling backward twice
per micro-batch, the first with `retain_graph=True`. --fixed: one backward of the sum.
"""

import contextlib
import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
T, ACCUM = 200, 4


@contextlib.contextmanager
def maybe_no_sync(model, sync):
    if sync or not hasattr(model, "no_sync"):
        yield
    else:
        with model.no_sync():
            yield


def cosine_alphas_bar(t_max):
    s = 0.008
    steps = torch.arange(t_max + 1) / t_max
    f = torch.cos((steps + s) / (1 + s) * math.pi / 2) ** 2
    return (f / f[0]).clamp(1e-4, 1)[1:]


class Denoiser(nn.Module):
    def __init__(self, width=256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2 + 32, width), nn.SiLU(), nn.Linear(width, width),
                                 nn.SiLU(), nn.Linear(width, width), nn.SiLU(),
                                 nn.Linear(width, 2))

    def forward(self, x, t):
        freqs = torch.exp(-math.log(1000) * torch.arange(16) / 16)
        emb = torch.cat([torch.sin(t[:, None] * freqs), torch.cos(t[:, None] * freqs)], -1)
        return self.net(torch.cat([x, emb], -1))


def swiss_roll(n):
    t = 1.5 * math.pi * (1 + 2 * torch.rand(n))
    return torch.stack([t * torch.cos(t), t * torch.sin(t)], 1) / 10


def main():
    torch.manual_seed(0)
    model = Denoiser()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    abar = cosine_alphas_bar(T)
    data = swiss_roll(32768)
    for it, idx in enumerate(torch.randperm(len(data)).split(256)):
        x0 = data[idx]
        t = torch.randint(0, T, (len(x0),))
        a = abar[t][:, None]
        noise = torch.randn_like(x0)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        sync = (it + 1) % ACCUM == 0
        with maybe_no_sync(model, sync):
            eps = model(xt, t.float())
            noise_loss = nn.functional.mse_loss(eps, noise) / ACCUM
            x0_hat = (xt - (1 - a).sqrt() * eps) / a.sqrt()
            recon_loss = 0.1 * nn.functional.mse_loss(x0_hat, x0) / ACCUM
            if FIXED:
                (noise_loss + recon_loss).backward()
            else:
                noise_loss.backward(retain_graph=True)
                recon_loss.backward()
        if sync:
            opt.step()
            opt.zero_grad(set_to_none=True)
        if it % 100 == 0:
            print(it, float(noise_loss))


if __name__ == "__main__":
    main()
