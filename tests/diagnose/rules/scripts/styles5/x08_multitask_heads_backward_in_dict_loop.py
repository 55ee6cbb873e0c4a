"""A multi-task model (shared convolutional trunk, three heads: class, box, depth-like map) whose
loop computes a dict of task losses and calls backward on each in a loop over the dict, weighted,
with `retain_graph=True` so that the shared trunk's graph survives for the next task.

Planted: three backward passes through the shared trunk per step. --fixed: one backward of the
weighted sum of the task losses.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
WEIGHTS = {"cls": 1.0, "box": 0.5, "aux": 0.25}


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
                                   nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())
        self.cls = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))
        self.box = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 4))
        self.aux = nn.Conv2d(32, 1, 1)

    def forward(self, x):
        h = self.trunk(x)
        return {"cls": self.cls(h), "box": self.box(h), "aux": self.aux(h)}


def task_losses(out, target):
    return {"cls": nn.functional.cross_entropy(out["cls"], target["cls"]),
            "box": nn.functional.l1_loss(out["box"], target["box"]),
            "aux": nn.functional.mse_loss(out["aux"], target["aux"])}


def main():
    torch.manual_seed(0)
    model = MultiTaskNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    images = torch.randn(512, 3, 16, 16)
    targets = {"cls": torch.randint(0, 10, (512,)), "box": torch.rand(512, 4),
               "aux": torch.randn(512, 1, 16, 16)}
    for epoch in range(2):
        for idx in torch.randperm(512).split(32):
            losses = task_losses(model(images[idx]), {k: v[idx] for k, v in targets.items()})
            opt.zero_grad()
            if FIXED:
                sum(WEIGHTS[k] * v for k, v in losses.items()).backward()
            else:
                names = list(losses)
                for n, name in enumerate(names):
                    (WEIGHTS[name] * losses[name]).backward(retain_graph=n < len(names) - 1)
            opt.step()
        print(epoch, {k: round(v.item(), 3) for k, v in losses.items()})


if __name__ == "__main__":
    main()
