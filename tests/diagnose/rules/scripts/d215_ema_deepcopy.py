"""Keeps an EMA of the weights by deep-copying the whole model after every step."""

import copy

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    ema = copy.deepcopy(model)
    for step in range(200):
        x = torch.randn(32, 64)
        y = torch.randint(0, 10, (32,))
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        previous = ema
        ema = copy.deepcopy(model)  # "EMA": the new weights blended into a fresh copy
        with torch.no_grad():
            for p_ema, p_old in zip(ema.parameters(), previous.parameters()):
                p_ema.mul_(0.01).add_(p_old, alpha=0.99)


if __name__ == "__main__":
    main()
