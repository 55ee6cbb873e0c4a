"""A loop with a hand-written progress bar (`ProgressBar.set_postfix(**values)` redraws a line
with the running values) and a metrics dict of running means; a small attention pooling model
over bags of embedding vectors (multiple-instance learning).

Planted: every step calls `bar.set_postfix(loss=loss.item(), acc=acc.item())`: two host reads
of fresh results per step. --fixed: the postfix is updated every 50 steps.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class ProgressBar:
    def __init__(self, total):
        self.total, self.n, self.postfix = total, 0, {}

    def set_postfix(self, **values):
        self.postfix = values

    def step(self):
        self.n += 1
        if self.n % 100 == 0:
            shown = ", ".join(f"{k}={v:.3f}" for k, v in self.postfix.items())
            print(f"{self.n}/{self.total} {shown}")


class AttentionMIL(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, d), nn.ReLU())
        self.score = nn.Linear(d, 1)
        self.cls = nn.Linear(d, 2)

    def forward(self, bags):
        h = self.enc(bags)
        w = self.score(h).softmax(1)
        return self.cls((w * h).sum(1))


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    bags = torch.randn(16000, 16, 64, generator=g)
    labels = (bags[:, :, 0].max(1).values > 2.0).long()
    model = AttentionMIL()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = list(zip(bags.split(32), labels.split(32)))
    bar = ProgressBar(len(batches) * 2)
    for _ in range(2):
        for i, (x, y) in enumerate(batches):
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            acc = (logits.argmax(1) == y).float().mean()
            if not FIXED or i % 50 == 0:
                bar.set_postfix(loss=loss.item(), acc=acc.item())
            bar.step()
