"""A clean control: SimCLR-style contrastive training with an InfoNCE loss over a 512x512
similarity matrix of two augmented views (batch 256), a projection head, AdamW, one backward
per step, the loss logged every 50 steps. Nothing is planted; `--fixed` runs the same program.
"""

import torch
from torch import nn

if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(20000, 96)
    encoder = nn.Sequential(nn.Linear(96, 512), nn.ReLU(), nn.Linear(512, 256))
    head = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 64))
    opt = torch.optim.AdamW(list(encoder.parameters()) + list(head.parameters()), lr=1e-3)
    step = 0
    for _epoch in range(2):
        for idx in torch.randperm(len(data)).split(256):
            x = data[idx]
            views = torch.cat([x + 0.1 * torch.randn_like(x), x * (1 + 0.1 * torch.randn_like(x))])
            z = nn.functional.normalize(head(encoder(views)), dim=1)
            sim = z @ z.t() / 0.2
            sim.fill_diagonal_(float("-inf"))
            n = len(x)
            targets = torch.cat([torch.arange(n, 2 * n), torch.arange(n)])
            loss = nn.functional.cross_entropy(sim, targets)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % 50 == 0:
                print("step", step, float(loss))
