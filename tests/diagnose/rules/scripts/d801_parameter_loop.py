"""Applies weight decay and records gradient norms with a Python loop over the parameters."""

import torch
from torch import nn

WEIGHT_DECAY = 1e-4


def build():
    layers = []
    for _ in range(12):
        layers += [nn.Linear(32, 32), nn.LayerNorm(32), nn.GELU()]
    return nn.Sequential(*layers, nn.Linear(32, 1))


def main():
    torch.manual_seed(0)
    model = build()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    grad_norms = {}
    for step in range(300):
        x = torch.randn(16, 32)
        target = x.sum(dim=1, keepdim=True)
        loss = ((model(x) - target) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            for name, param in model.named_parameters():
                param.mul_(1 - WEIGHT_DECAY)
                param.clamp_(-3, 3)
                grad_norms[name] = param.grad.norm()


if __name__ == "__main__":
    main()
