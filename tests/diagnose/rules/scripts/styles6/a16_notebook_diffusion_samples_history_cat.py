"""A notebook-style diffusion experiment (`# %%` cells, globals): a small conv denoiser trained
on 16x16 synthetic blobs with a linear beta schedule; after each step the author keeps the
step's noisy inputs in a tensor of "everything seen" to plot their statistics at the end.

Planted: `seen = torch.cat([seen, xt.detach()])` every step: the whole history is copied each
time, so each step costs more than the one before. --fixed: the batches go into a list,
concatenated once at the end.
"""

# %%
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
torch.manual_seed(0)
T = 100
betas = torch.linspace(1e-4, 0.02, T)
abar = torch.cumprod(1 - betas, 0)

# %%
yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
centers = torch.rand(4096, 2) * 12 + 2
images = torch.exp(-((xx - centers[:, 0, None, None]) ** 2 + (yy - centers[:, 1, None, None])
                     ** 2) / 8)[:, None] * 2 - 1

# %%
net = nn.Sequential(nn.Conv2d(2, 32, 3, padding=1), nn.SiLU(), nn.Conv2d(32, 32, 3, padding=1),
                    nn.SiLU(), nn.Conv2d(32, 1, 3, padding=1))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
seen = torch.empty(0, 1, 16, 16)
seen_list = []

# %%
for epoch in range(2):
    for idx in torch.randperm(len(images)).split(64):
        x0 = images[idx]
        t = torch.randint(0, T, (len(x0),))
        noise = torch.randn_like(x0)
        a = abar[t][:, None, None, None]
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        tmap = (t.float() / T)[:, None, None, None].expand_as(xt)
        loss = nn.functional.mse_loss(net(torch.cat([xt, tmap], 1)), noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if FIXED:
            seen_list.append(xt.detach())
        else:
            seen = torch.cat([seen, xt.detach().repeat(16, 1, 1, 1)])
    print(epoch, loss.item())

# %%
if FIXED:
    seen = torch.cat(seen_list)
print("seen", seen.shape, float(seen.std()))
