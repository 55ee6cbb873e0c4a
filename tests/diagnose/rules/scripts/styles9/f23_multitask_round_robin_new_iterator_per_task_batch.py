"""Multi-task training over two datasets of different sizes (a sentiment-like and a topic-like
task on the same bag-of-words inputs), alternating tasks round robin: each step picks the next
task, draws a batch from that task's loader and trains the shared encoder with that task's head.

Planted: the batch is drawn as `next(iter(loaders[task]))`, a new iterator per step, so every
step starts the loader anew (a shuffle of the whole dataset by the sampler, then the first
batch). --fixed: one persistent iterator per task, restarted only when it ends.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv
VOCAB = 500


def make_task(n, classes, seed):
    g = torch.Generator().manual_seed(seed)
    x = (torch.rand(n, VOCAB, generator=g) < 0.04).float()
    y = (x[:, :classes * 50].reshape(n, classes, 50).sum(2)).argmax(1)
    return TensorDataset(x, y)


class Draw:
    def __init__(self, loader):
        self.loader, self.it = loader, iter(loader)

    def __call__(self):
        try:
            return next(self.it)
        except StopIteration:
            self.it = iter(self.loader)
            return next(self.it)


if __name__ == "__main__":
    torch.manual_seed(0)
    tasks = {"sentiment": (make_task(20000, 2, 0), 2), "topic": (make_task(10000, 6, 1), 6)}
    loaders = {t: DataLoader(ds, batch_size=32, shuffle=True) for t, (ds, _) in tasks.items()}
    draws = {t: Draw(loader) for t, loader in loaders.items()}
    encoder = nn.Sequential(nn.Linear(VOCAB, 128), nn.ReLU())
    heads = nn.ModuleDict({t: nn.Linear(128, k) for t, (_, k) in tasks.items()})
    opt = torch.optim.Adam([*encoder.parameters(), *heads.parameters()], lr=1e-3)
    names = list(tasks)
    for step in range(600):
        task = names[step % len(names)]
        xb, yb = draws[task]() if FIXED else next(iter(loaders[task]))
        loss = nn.functional.cross_entropy(heads[task](encoder(xb)), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, task, loss.item())
