"""Clean: a random-search hyperparameter sweep that trains three models one after another in
the same process (learning rate, width and batch size drawn from sensible ranges), each for
two epochs with per-epoch validation under `torch.no_grad()` in `eval()` mode, and keeps the
best trial's `state_dict` (copied once per trial).

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import random

import torch
from torch import nn

if __name__ == "__main__":
    torch.manual_seed(0)
    rng = random.Random(0)
    x = torch.randn(12000, 64)
    y = (x[:, :6].sum(1) > 0).long()
    xv, yv = x[-2000:], y[-2000:]
    best = (0.0, None, None)
    for trial in range(3):
        params = {"lr": 10 ** rng.uniform(-3.5, -2.5), "width": rng.choice([256, 512]),
                  "batch": rng.choice([128, 256])}
        model = nn.Sequential(nn.Linear(64, params["width"]), nn.ReLU(), nn.Dropout(0.1),
                              nn.Linear(params["width"], 2))
        opt = torch.optim.AdamW(model.parameters(), lr=params["lr"])
        for epoch in range(2):
            model.train()
            perm = torch.randperm(10000)
            for start in range(0, 10000, params["batch"]):
                idx = perm[start : start + params["batch"]]
                loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            model.eval()
            with torch.no_grad():
                acc = (model(xv).argmax(1) == yv).float().mean().item()
        if acc > best[0]:
            best = (acc, params, {k: v.clone() for k, v in model.state_dict().items()})
        print("trial", trial, params, acc)
    print("best", best[0], best[1])
