"""CLEAN: gradient accumulation through a `maybe_no_sync` context manager, 4 micro-batches per
optimizer step, one backward per micro-batch on the summed losses, `zero_grad(set_to_none=
True)` after each step; a DDPM MLP denoiser on 2-D points. Nothing is planted (`--fixed`
changes nothing).
"""

import contextlib
import math

import torch
from torch import nn

T, ACCUM = 200, 4


@contextlib.contextmanager
def maybe_no_sync(model, sync):
    if sync or not hasattr(model, "no_sync"):
        yield
    else:
        with model.no_sync():
            yield


def main():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 256), nn.SiLU(), nn.Linear(256, 256), nn.SiLU(),
                        nn.Linear(256, 2))
    opt = torch.optim.Adam(net.parameters(), lr=2e-4)
    abar = torch.cumprod(1 - torch.linspace(1e-4, 0.02, T), 0)
    theta = torch.rand(32768) * 3 * math.pi
    data = torch.stack([theta.cos() * theta, theta.sin() * theta], 1) / 10
    for it, idx in enumerate(torch.randperm(len(data)).split(256)):
        x0 = data[idx]
        t = torch.randint(0, T, (len(x0),))
        a = abar[t][:, None]
        noise = torch.randn_like(x0)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        sync = (it + 1) % ACCUM == 0
        with maybe_no_sync(net, sync):
            eps = net(torch.cat([xt, t[:, None].float() / T], 1))
            loss = nn.functional.mse_loss(eps, noise) / ACCUM
            loss.backward()
        if sync:
            opt.step()
            opt.zero_grad(set_to_none=True)
        if it % 200 == 0:
            print(it, loss.item() * ACCUM)


if __name__ == "__main__":
    main()
