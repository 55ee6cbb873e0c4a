"""Clean: a VAE with linear KL annealing; the KL and reconstruction terms are logged as floats
once every 100 steps, the history of floats is bounded, one backward per step. `--fixed`
changes nothing.
"""

from collections import deque

import torch
from torch import nn

if __name__ == "__main__":
    torch.manual_seed(0)
    data = (torch.rand(8192, 784) < 0.2).float()
    enc = nn.Sequential(nn.Linear(784, 400), nn.ReLU(), nn.Linear(400, 40))
    dec = nn.Sequential(nn.Linear(20, 400), nn.ReLU(), nn.Linear(400, 784))
    opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=1e-3)
    history = deque(maxlen=100)
    step = 0
    for epoch in range(3):
        for idx in torch.randperm(len(data)).split(128):
            x = data[idx]
            mu, logvar = enc(x).chunk(2, 1)
            z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
            recon = nn.functional.binary_cross_entropy_with_logits(
                dec(z), x, reduction="sum"
            ) / len(x)
            kl = -0.5 * torch.sum(1 + logvar - mu**2 - logvar.exp()) / len(x)
            beta = min(1.0, step / 150)
            loss = recon + beta * kl
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % 100 == 0:
                history.append((recon.item(), kl.item()))
        print("epoch", epoch, history[-1] if history else None)
