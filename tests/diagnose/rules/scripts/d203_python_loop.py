"""A weighted per-sample loss written as a Python loop over the batch."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 8))

    def forward(self, x):
        return self.body(x)


def weighted_loss(pred, target, weights):
    total = pred.new_zeros(())
    for i in range(pred.shape[0]):  # one sample at a time
        err = pred[i] - target[i]
        total = total + weights[i] * (err * err).sum()
    return total / pred.shape[0]


def main():
    torch.manual_seed(0)
    x_all = torch.randn(2048, 64)
    y_all = torch.randn(2048, 8)
    w_all = torch.rand(2048)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batch = 128
    for step in range(40):
        idx = torch.randint(0, len(x_all), (batch,))
        optimizer.zero_grad()
        loss = weighted_loss(model(x_all[idx]), y_all[idx], w_all[idx])
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
