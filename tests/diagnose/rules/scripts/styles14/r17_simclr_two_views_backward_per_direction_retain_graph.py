"""SimCLR-style contrastive learning: two augmented views of each sample go through one encoder
and projection head; the InfoNCE loss is computed in both directions (view a against b, b
against a).

Planted: each direction is backpropagated on its own, the first with `retain_graph=True`: the
backward through the encoder runs twice per step.
--fixed: the two directions are summed and backpropagated once.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def augment(x):
    return x * (1 + 0.1 * torch.randn(len(x), 1)) + 0.1 * torch.randn_like(x)


def info_nce(za, zb, temperature=0.2):
    logits = nn.functional.normalize(za, dim=1) @ nn.functional.normalize(zb, dim=1).T / temperature
    return nn.functional.cross_entropy(logits, torch.arange(len(za)))


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(8192, 256)
    encoder = nn.Sequential(
        nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 256)
    )
    head = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 64))
    opt = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.05, momentum=0.9)
    for epoch in range(2):
        for idx in torch.randperm(len(data)).split(256):
            x = data[idx]
            za, zb = head(encoder(augment(x))), head(encoder(augment(x)))
            opt.zero_grad()
            if FIXED:
                loss = info_nce(za, zb) + info_nce(zb, za)
                loss.backward()
            else:
                loss_ab, loss_ba = info_nce(za, zb), info_nce(zb, za)
                loss_ab.backward(retain_graph=True)
                loss_ba.backward()
                loss = loss_ab + loss_ba
            opt.step()
        print("epoch", epoch, float(loss))
