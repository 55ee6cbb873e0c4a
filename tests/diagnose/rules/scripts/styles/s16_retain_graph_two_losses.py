"""Multi-task model: two heads, two losses, two backward passes with retain_graph=True.

Planted: task_a.backward(retain_graph=True); task_b.backward(). --fixed: (task_a + task_b).backward().
"""

import sys

import torch
from torch import nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU())
        self.cls = nn.Linear(512, 8)
        self.reg = nn.Linear(512, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls(h), self.reg(h).squeeze(-1)


def main():
    summed = "--fixed" in sys.argv
    torch.manual_seed(0)
    x = torch.randn(4096, 128)
    labels, values = torch.randint(0, 8, (4096,)), torch.randn(4096)
    mtl = TwoHeads()
    opt = torch.optim.Adam(mtl.parameters(), lr=1e-3, foreach=True)
    for _ in range(3):
        for xb, lb, vb in zip(x.split(128), labels.split(128), values.split(128)):
            logits, pred = mtl(xb)
            task_a = nn.functional.cross_entropy(logits, lb)
            task_b = nn.functional.mse_loss(pred, vb)
            opt.zero_grad()
            if summed:
                (task_a + task_b).backward()
            else:
                task_a.backward(retain_graph=True)
                task_b.backward()
            opt.step()


if __name__ == "__main__":
    main()
