"""A notebook exported to a flat script: `# %%` cells, globals everywhere, no functions for
the loop. A convolutional VAE on 28x28 synthetic strokes, KL weight annealed linearly over the
first 200 steps. The author copied a `Block` from a large diffusion repo that wraps every
residual block in activation checkpointing to save memory.

Planted: `torch.utils.checkpoint.checkpoint` around every encoder/decoder block of a small VAE
on a CPU with memory to spare: every block's forward runs twice. --fixed: USE_CKPT = False.
"""

# %%
import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

USE_CKPT = "--fixed" not in sys.argv
torch.manual_seed(0)
BATCH, LATENT, STEPS, ANNEAL = 64, 16, 400, 200

# %%
imgs = torch.zeros(2048, 1, 28, 28)
for k in range(2048):
    r = k % 20 + 4
    imgs[k, 0, r, 4:24] = 1.0
    imgs[k, 0, 4:24, (k * 7) % 20 + 4] = 1.0
imgs = F.avg_pool2d(imgs, 3, 1, 1)


# %%
class Block(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.GroupNorm(8, ch), nn.SiLU(),
                                  nn.Conv2d(ch, ch, 3, padding=1), nn.GroupNorm(8, ch), nn.SiLU())

    def forward(self, x):
        if USE_CKPT and self.training:
            return x + checkpoint(self.body, x, use_reentrant=False)
        return x + self.body(x)


enc = nn.Sequential(nn.Conv2d(1, 32, 3, 2, 1), Block(32), Block(32), nn.Conv2d(32, 64, 3, 2, 1),
                    Block(64), Block(64), nn.Flatten(), nn.Linear(64 * 7 * 7, 2 * LATENT))
dec = nn.Sequential(nn.Linear(LATENT, 64 * 7 * 7), nn.Unflatten(1, (64, 7, 7)), Block(64),
                    nn.ConvTranspose2d(64, 32, 4, 2, 1), Block(32),
                    nn.ConvTranspose2d(32, 1, 4, 2, 1))
opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=1e-3)

# %%
step = 0
log = []
while step < STEPS:
    for i in torch.randperm(len(imgs)).split(BATCH):
        x = imgs[i]
        mu, logvar = enc(x).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        recon = F.binary_cross_entropy_with_logits(dec(z), x, reduction="sum") / len(x)
        kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / len(x)
        beta = min(1.0, step / ANNEAL)
        loss = recon + beta * kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 100 == 0:
            log.append((step, loss.item(), beta))
            print(log[-1])
        if step >= STEPS:
            break
