"""A regression with a smoothness penalty whose weight a helper object adapts from the mean of
every penalty so far: the helper keeps the penalty tensors themselves, each with its step's
graph. The penalty is the second loss term among the loop's variables (the data term comes
first). `--fixed`: the helper keeps `penalty.item()`."""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class PenaltyWeight:
    def __init__(self):
        self.weight, self.seen = 0.1, []

    def update(self, penalty):
        self.seen.append(penalty.item() if FIXED else penalty)
        self.weight = 0.1 / (1.0 + penalty.item())
        return self.weight


def main():
    torch.manual_seed(0)
    x, y = torch.randn(2048, 32), torch.randn(2048, 1)
    model = nn.Sequential(nn.Linear(32, 128), nn.Tanh(), nn.Linear(128, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    weights = PenaltyWeight()
    for step in range(400):
        xb, yb = x[step % 32 * 64 : step % 32 * 64 + 64], y[step % 32 * 64 : step % 32 * 64 + 64]
        out = model(xb)
        data_term = nn.functional.mse_loss(out, yb)
        penalty = (out[1:] - out[:-1]).pow(2).mean()
        loss = data_term + weights.update(penalty) * penalty
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
