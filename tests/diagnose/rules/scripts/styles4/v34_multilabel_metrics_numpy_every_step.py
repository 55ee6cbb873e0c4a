"""A multi-label tagger (BCEWithLogits, 12 tags) with a scikit-learn style metrics helper called
every step: it moves the logits and targets to NumPy (`.detach().cpu().numpy()`) and computes a
micro-F1 there, to show a running F1 in the progress line.

Planted: a host read of the batch's outputs every step (on CPU it costs no idle time: an
info-level finding with its line). --fixed: F1 computed once per epoch on accumulated counts.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def micro_f1(logits, targets):
    pred = (logits.detach().cpu().numpy() > 0).astype(np.int64)
    true = targets.cpu().numpy().astype(np.int64)
    tp = (pred & true).sum()
    return 2 * tp / max(1, pred.sum() + true.sum())


def main():
    torch.manual_seed(0)
    x = torch.randn(16384, 128)
    y = (x[:, :12] > 0.8).float()
    model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 12))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    crit = nn.BCEWithLogitsLoss()
    for epoch in range(3):
        f1s = []
        for xb, yb in zip(x.split(64), y.split(64)):
            logits = model(xb)
            loss = crit(logits, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if not FIXED:
                f1s.append(micro_f1(logits, yb))
        if FIXED:
            with torch.no_grad():
                f1s.append(micro_f1(model(x[:2048]), y[:2048]))
        print(f"epoch {epoch} f1 {np.mean(f1s):.3f}")


if __name__ == "__main__":
    main()
