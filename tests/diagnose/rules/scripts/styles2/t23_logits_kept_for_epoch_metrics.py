"""Multi-label classifier; per-epoch metrics (mean loss, F1) are computed at the end of the epoch
from outputs collected in a dict of lists, the way many notebooks do.

Planted: history["logits"].append(logits) keeps each step's graph (memory grows every step).
--fixed: logits.detach() is kept.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def f1(logits, targets):
    pred = (logits > 0).float()
    tp = (pred * targets).sum()
    return 2 * tp / (pred.sum() + targets.sum() + 1e-8)


def main():
    torch.manual_seed(0)
    x = torch.randn(6400, 128)
    targets = (x[:, :16] > 0.5).float()
    model = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 16))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    for epoch in range(2):
        history = {"logits": [], "targets": []}
        for xb, yb in zip(x.split(64), targets.split(64)):
            logits = model(xb)
            loss = nn.functional.binary_cross_entropy_with_logits(logits, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            history["logits"].append(logits.detach() if FIXED else logits)
            history["targets"].append(yb)
        score = f1(torch.cat(history["logits"]), torch.cat(history["targets"]))
        print(f"epoch {epoch}: f1 {score.item():.3f}")


if __name__ == "__main__":
    main()
