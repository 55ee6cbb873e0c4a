"""Layer-wise learning rates done by giving every parameter its own optimizer (a dict of
optimizers keyed by parameter name), stepped one after the other; a deep narrow MLP has 48
parameter tensors.

Planted: one optimizer per tensor: the update runs tensor by tensor. --fixed: one optimizer
with one parameter group per layer depth (foreach).
"""

import sys

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    layers = [nn.Linear(16, 64), nn.ReLU()]
    for _ in range(22):
        layers += [nn.Linear(64, 64), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(64, 1))
    names = [n for n, _ in model.named_parameters()]
    lr_of = {n: 1e-3 * 0.97 ** int(n.split(".")[0]) for n in names}
    if "--fixed" in sys.argv:
        groups = [{"params": [p], "lr": lr_of[n]} for n, p in model.named_parameters()]
        optimizers = {"all": torch.optim.Adam(groups, foreach=True)}
    else:
        optimizers = {n: torch.optim.Adam([p], lr=lr_of[n]) for n, p in model.named_parameters()}
    x = torch.randn(8192, 16)
    y = x[:, :4].prod(1, keepdim=True)
    for epoch in range(3):
        for xb, yb in zip(x.split(32), y.split(32)):
            loss = nn.functional.mse_loss(model(xb), yb)
            for opt in optimizers.values():
                opt.zero_grad()
            loss.backward()
            for opt in optimizers.values():
                opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
