"""A NaN hunt that was never switched off: anomaly detection on for the whole training."""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    torch.autograd.set_detect_anomaly(True)
    x = torch.randn(4096, 32)
    y = (x[:, 0] > 0).long()
    model = nn.Sequential(nn.Linear(32, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh(),
                          nn.Linear(128, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(3):
        for i in range(0, len(x), 128):
            loss = nn.functional.cross_entropy(model(x[i:i + 128]), y[i:i + 128])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    torch.autograd.set_detect_anomaly(False)


if __name__ == "__main__":
    main()
