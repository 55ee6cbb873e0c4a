"""SimCLR-style contrastive pre-training of a deep MLP encoder with an NT-Xent loss; the optimizer
was built with foreach=False (copied from an old recipe).

Planted: SGD(foreach=False) over ~40 parameter tensors: the step updates tensor by tensor.
--fixed: foreach=True.
"""

import sys

import torch
import torch.nn.functional as F
from torch import nn


def encoder(depth=18, width=64):
    layers = [nn.Linear(32, width)]
    for _ in range(depth):
        layers += [nn.LayerNorm(width), nn.ReLU(), nn.Linear(width, width)]
    return nn.Sequential(*layers)


def augment(x):
    return x + 0.1 * torch.randn_like(x)


def nt_xent(z1, z2, tau=0.2):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / tau
    n = z1.size(0)
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


def main():
    torch.manual_seed(0)
    net = encoder()
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4,
                          foreach="--fixed" in sys.argv)
    data = torch.randn(4096, 32)
    for epoch in range(3):
        for x in data[torch.randperm(len(data))].split(32):
            loss = nt_xent(net(augment(x)), net(augment(x)))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: nt-xent {loss.item():.3f}")


if __name__ == "__main__":
    main()
