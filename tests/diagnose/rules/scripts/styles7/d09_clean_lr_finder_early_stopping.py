"""CLEAN: an LR-range test (40 steps on a copy of the model) before training, then training with
early stopping (patience 3) on a validation loss computed once per epoch under inference_mode;
a 1-D CNN on sensor windows. Nothing is planted (`--fixed` changes nothing).
"""

import copy

import torch
from torch import nn


def make_model():
    return nn.Sequential(
        nn.Conv1d(6, 32, 5, padding=2), nn.ReLU(), nn.Conv1d(32, 32, 5, padding=2), nn.ReLU(),
        nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(32, 1),
    )


def lr_range(model, x, y, steps=40):
    probe = copy.deepcopy(model)
    opt = torch.optim.SGD(probe.parameters(), lr=1e-5)
    results = []
    for i, idx in zip(range(steps), torch.randperm(len(x)).split(64)):
        lr = 1e-5 * (1e5 ** (i / steps))
        for group in opt.param_groups:
            group["lr"] = lr
        loss = nn.functional.mse_loss(probe(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        results.append((loss.item(), lr))
    return min(results)[1] / 10


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8000, 6, 64).cumsum(2) * 0.1
    y = x[:, 0, -8:].mean(1, keepdim=True)
    vx, vy = x[6000:], y[6000:]
    x, y = x[:6000], y[:6000]
    model = make_model()
    lr = min(lr_range(model, x, y), 1e-2)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    best, bad = float("inf"), 0
    for epoch in range(8):
        model.train()
        for idx in torch.randperm(len(x)).split(64):
            loss = nn.functional.mse_loss(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.inference_mode():
            val = nn.functional.mse_loss(model(vx), vy).item()
        if val < best - 1e-5:
            best, bad = val, 0
        else:
            bad += 1
            if bad == 3:
                break
        print(epoch, val)
