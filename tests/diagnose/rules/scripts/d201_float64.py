"""Regression on NumPy data: the arrays are float64, so the model was made .double() to match."""

import numpy as np
import torch
from torch import nn


def main():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4096, 256))  # float64, NumPy's default
    y = X[:, :8].sum(axis=1, keepdims=True) + 0.1 * rng.standard_normal((4096, 1))
    X, y = torch.from_numpy(X), torch.from_numpy(y)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 1)).double()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    losses = []
    for step in range(40):
        idx = torch.randint(0, len(X), (256,))
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X[idx]), y[idx])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())


if __name__ == "__main__":
    main()
