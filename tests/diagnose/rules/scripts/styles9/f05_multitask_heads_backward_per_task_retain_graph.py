"""Multi-task learning: one shared trunk and three task heads (regression, binary and 5-way
classification) over the same tabular inputs, with per-task loss weights from a dict; per-task
losses printed per epoch.

Planted: each task's weighted loss gets its own `backward(retain_graph=True)` "so each head's
gradient is added separately", so the shared trunk's graph is walked backwards three times per
step. --fixed: the weighted losses are summed and one backward runs.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
WEIGHTS = {"reg": 1.0, "bin": 0.5, "cls": 0.5}


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(40, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                   nn.Linear(512, 256), nn.ReLU())
        self.heads = nn.ModuleDict({"reg": nn.Linear(256, 1), "bin": nn.Linear(256, 1),
                                    "cls": nn.Linear(256, 5)})

    def forward(self, x):
        h = self.trunk(x)
        return {name: head(h) for name, head in self.heads.items()}


def task_losses(out, t):
    return {
        "reg": nn.functional.mse_loss(out["reg"].squeeze(1), t["reg"]),
        "bin": nn.functional.binary_cross_entropy_with_logits(out["bin"].squeeze(1), t["bin"]),
        "cls": nn.functional.cross_entropy(out["cls"], t["cls"]),
    }


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8000, 40)
    targets = {"reg": x[:, 0] * 2 - x[:, 1], "bin": (x[:, 2] > 0).float(),
               "cls": x[:, 3:8].argmax(1)}
    model = MultiTask()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        perm = torch.randperm(len(x))
        for start in range(0, len(x), 128):
            idx = perm[start : start + 128]
            losses = task_losses(model(x[idx]), {k: v[idx] for k, v in targets.items()})
            opt.zero_grad()
            if FIXED:
                sum(WEIGHTS[k] * v for k, v in losses.items()).backward()
            else:
                for name, value in losses.items():
                    (WEIGHTS[name] * value).backward(retain_graph=True)
            opt.step()
        print("epoch", epoch, {k: round(v.item(), 3) for k, v in losses.items()})
