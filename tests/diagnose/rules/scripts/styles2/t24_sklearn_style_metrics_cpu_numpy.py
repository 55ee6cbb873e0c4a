"""Metrics computed the scikit-learn way: predictions and labels are moved to NumPy with
.cpu().numpy() in every step and appended to Python lists.

Planted: .detach().cpu().numpy() of the predictions in every step (a host read per step).
--fixed: predictions are concatenated as tensors and converted once per epoch.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def main():
    torch.manual_seed(0)
    x = torch.randn(8000, 50)
    y = (x[:, 0] - x[:, 1] > 0).long()
    model = nn.Sequential(nn.Linear(50, 256), nn.ReLU(), nn.Linear(256, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, foreach=True)
    for epoch in range(2):
        preds, golds = [], []
        for xb, yb in zip(x.split(64), y.split(64)):
            logits = model(xb)
            loss = nn.functional.cross_entropy(logits, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if FIXED:
                preds.append(logits.detach().argmax(1))
                golds.append(yb)
            else:
                preds.append(logits.detach().cpu().numpy().argmax(1))
                golds.append(yb.cpu().numpy())
        if FIXED:
            acc = (torch.cat(preds) == torch.cat(golds)).float().mean().item()
        else:
            acc = float((np.concatenate(preds) == np.concatenate(golds)).mean())
        print(f"epoch {epoch}: acc {acc:.3f}")


if __name__ == "__main__":
    main()
