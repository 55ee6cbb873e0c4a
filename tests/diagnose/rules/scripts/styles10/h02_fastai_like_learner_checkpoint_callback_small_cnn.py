"""A fastai-like `Learner` written by the author: `fit(n_epoch)` runs events
(`before_fit`, `before_batch`, `after_loss`, `after_step`, `after_epoch`) through a list of
`Callback` objects, and the model's body is wrapped by a callback. A small CNN on generated
32x32 images.

Planted: a `GradientCheckpointCallback` (copied from a large-model recipe) wraps every block of
the small CNN in `torch.utils.checkpoint.checkpoint` at `before_fit`: each block's forward runs
twice, on a CPU with gigabytes of memory to spare. --fixed: the callback is not in the list.
"""

import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

FIXED = "--fixed" in sys.argv


class Callback:
    def __call__(self, event, learn):
        getattr(self, event, lambda learn: None)(learn)


class Checkpointed(nn.Module):
    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x):
        return checkpoint(self.block, x, use_reentrant=False)


class GradientCheckpointCallback(Callback):
    def before_fit(self, learn):
        learn.model.body = nn.Sequential(*[Checkpointed(b) for b in learn.model.body])


class Recorder(Callback):
    def before_fit(self, learn):
        self.losses = []

    def after_step(self, learn):
        self.losses.append(learn.loss.detach())

    def after_epoch(self, learn):
        print("epoch", learn.epoch, torch.stack(self.losses[-20:]).mean().item())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU()),
            nn.Sequential(nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU()),
            nn.Sequential(nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU()),
        )
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))

    def forward(self, x):
        return self.head(self.body(x))


class Learner:
    def __init__(self, model, data, loss_func, lr, cbs):
        self.model, self.data, self.loss_func, self.cbs = model, data, loss_func, cbs
        self.lr = lr

    def event(self, name):
        for cb in self.cbs:
            cb(name, self)

    def fit(self, n_epoch):
        self.event("before_fit")
        self.opt = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        for self.epoch in range(n_epoch):
            for self.xb, self.yb in self.data:
                self.event("before_batch")
                self.loss = self.loss_func(self.model(self.xb), self.yb)
                self.event("after_loss")
                self.loss.backward()
                self.opt.step()
                self.opt.zero_grad()
                self.event("after_step")
            self.event("after_epoch")


if __name__ == "__main__":
    torch.manual_seed(0)
    images = torch.randn(1536, 3, 32, 32)
    labels = torch.randint(0, 10, (1536,))
    data = [(images[i : i + 64], labels[i : i + 64]) for i in range(0, 1536, 64)]
    cbs = [Recorder()] + ([] if FIXED else [GradientCheckpointCallback()])
    Learner(Net(), data, nn.functional.cross_entropy, 1e-3, cbs).fit(3)
