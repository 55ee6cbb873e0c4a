"""A multi-task network (a shared trunk, a classification head and a regression head) whose
per-task losses are stored in a dict of lists for an end-of-epoch weighting heuristic; the
entries are the loss tensors themselves, each holding its step's autograd graph.

Planted: per-task losses kept with their graphs (memory grows every step). --fixed: .detach().
"""

import sys
from collections import defaultdict

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(48, 384), nn.ReLU(), nn.Linear(384, 384), nn.ReLU())
        self.cls = nn.Linear(384, 6)
        self.reg = nn.Linear(384, 2)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls(h), self.reg(h)


def main():
    torch.manual_seed(0)
    model = MultiTask()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    weights = {"cls": 1.0, "reg": 1.0}
    x = torch.randn(25600, 48)
    yc, yr = torch.randint(0, 6, (25600,)), torch.randn(25600, 2)
    for epoch in range(3):
        history = defaultdict(list)
        for xb, cb, rb in zip(x.split(128), yc.split(128), yr.split(128)):
            logits, reg = model(xb)
            losses = {"cls": nn.functional.cross_entropy(logits, cb),
                      "reg": nn.functional.smooth_l1_loss(reg, rb)}
            total = sum(weights[k] * v for k, v in losses.items())
            opt.zero_grad()
            total.backward()
            opt.step()
            for k, v in losses.items():
                history[k].append(v.detach() if FIXED else v)
        means = {k: torch.stack(v).mean() for k, v in history.items()}
        weights = {k: float(means[k] / sum(means.values())) * 2 for k in means}
        print(epoch, weights)


if __name__ == "__main__":
    main()
