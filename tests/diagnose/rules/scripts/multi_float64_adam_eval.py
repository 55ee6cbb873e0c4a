"""Three problems, each with a run-time fix: float64 data and model (NumPy arrays, the model made
.double() to match), Adam's per-tensor step over many small layers, and a validation pass every
few steps with autograd on."""

import numpy as np
import torch
from torch import nn


def validate(model, features, target):
    model.eval()
    total = 0.0
    for i in range(0, len(features), 512):
        total += nn.functional.mse_loss(model(features[i:i + 512]), target[i:i + 512]).item()
    model.train()
    return total


def main():
    rng = np.random.default_rng(0)
    features = torch.from_numpy(rng.standard_normal((6144, 64)))  # float64
    target = features[:, :4].sum(1, keepdim=True)
    train_x, train_y = features[:4096], target[:4096]
    val_x, val_y = features[4096:], target[4096:]
    torch.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [nn.Linear(64, 64), nn.Tanh()]
    model = nn.Sequential(*layers, nn.Linear(64, 1)).double()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(48):
        idx = torch.randint(0, len(train_x), (128,))
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(train_x[idx]), train_y[idx])
        loss.backward()
        optimizer.step()
        if step % 4 == 0:
            validate(model, val_x, val_y)


if __name__ == "__main__":
    main()
