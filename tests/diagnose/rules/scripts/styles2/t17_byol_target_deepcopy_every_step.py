"""BYOL-style self-supervised loop: the target network is refreshed from the online network.
The author rebuilds the target with copy.deepcopy in every step and then blends it.

Planted: copy.deepcopy(online) every step. --fixed: the target is created once and updated in
place with torch._foreach_lerp_ (an EMA).
"""

import copy
import sys

import torch
import torch.nn.functional as F
from torch import nn


def mlp(i, h, o):
    return nn.Sequential(nn.Linear(i, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Linear(h, o))


class Online(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = mlp(64, 512, 128)
        self.projector = mlp(128, 512, 64)

    def forward(self, x):
        return self.projector(self.encoder(x))


def byol_loss(p, z):
    return 2 - 2 * F.cosine_similarity(p, z.detach(), dim=-1).mean()


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    online, predictor = Online(), mlp(64, 256, 64)
    params = list(online.parameters()) + list(predictor.parameters())
    opt = torch.optim.Adam(params, lr=1e-3, foreach=True)
    target = copy.deepcopy(online).requires_grad_(False)
    data = torch.randn(4096, 64)
    for epoch in range(2):
        for x in data[torch.randperm(len(data))].split(128):
            v1, v2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
            loss = byol_loss(predictor(online(v1)), target(v2))
            loss = loss + byol_loss(predictor(online(v2)), target(v1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                if fixed:
                    torch._foreach_lerp_(list(target.parameters()), list(online.parameters()),
                                         0.01)
                else:
                    fresh = copy.deepcopy(online)
                    for t, f in zip(target.parameters(), fresh.parameters()):
                        f.mul_(0.01).add_(t, alpha=0.99)
                    target = fresh.requires_grad_(False)
        print(f"epoch {epoch}: {loss.item():.3f}")


if __name__ == "__main__":
    main()
