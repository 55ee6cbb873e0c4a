"""CLEAN: a notebook-style flat script (`# %%` cells, globals) training a small MLP VAE with a
KL warm-up on binarized synthetic strokes, batches sliced from a tensor, the loss logged
every 100 steps into a list of floats. Nothing is planted (`--fixed` changes nothing).
"""

# %%
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
LATENT, ANNEAL = 16, 300

# %%
imgs = (torch.rand(6000, 784) < 0.1).float()
imgs[:, ::29] = 1.0

# %%
enc = nn.Sequential(nn.Linear(784, 400), nn.ReLU(), nn.Linear(400, 2 * LATENT))
dec = nn.Sequential(nn.Linear(LATENT, 400), nn.ReLU(), nn.Linear(400, 784))
opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=1e-3)
log, step = [], 0

# %%
for epoch in range(3):
    for i in torch.randperm(len(imgs)).split(128):
        x = imgs[i]
        mu, logvar = enc(x).chunk(2, 1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        rec = F.binary_cross_entropy_with_logits(dec(z), x, reduction="sum") / len(x)
        kl = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum() / len(x)
        loss = rec + min(1.0, step / ANNEAL) * kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            log.append(loss.item())
        step += 1
    print(epoch, log[-1])
