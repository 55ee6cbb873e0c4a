"""Clean: a fastai-like `Learner` with events and callbacks (a recorder that keeps detached
losses, a validation callback that runs after each epoch under `torch.no_grad()` in `eval()`
mode, a one-cycle learning-rate callback stepped per batch). A small CNN on generated images.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import torch
from torch import nn


class Callback:
    def __call__(self, event, learn):
        getattr(self, event, lambda learn: None)(learn)


class Recorder(Callback):
    def before_fit(self, learn):
        self.losses = []

    def after_step(self, learn):
        self.losses.append(learn.loss.detach())


class OneCycle(Callback):
    def before_fit(self, learn):
        total = learn.n_epoch * len(learn.data)
        self.sched = torch.optim.lr_scheduler.OneCycleLR(learn.opt, max_lr=3e-3, total_steps=total)

    def after_step(self, learn):
        self.sched.step()


class Validate(Callback):
    def after_epoch(self, learn):
        learn.model.eval()
        with torch.no_grad():
            correct = sum((learn.model(x).argmax(1) == y).sum() for x, y in learn.valid)
        learn.model.train()
        print("epoch", learn.epoch, "acc", correct.item() / 512)


class Learner:
    def __init__(self, model, data, valid, cbs):
        self.model, self.data, self.valid, self.cbs = model, data, valid, cbs
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def event(self, name):
        for cb in self.cbs:
            cb(name, self)

    def fit(self, n_epoch):
        self.n_epoch = n_epoch
        self.event("before_fit")
        for self.epoch in range(n_epoch):
            for xb, yb in self.data:
                self.loss = nn.functional.cross_entropy(self.model(xb), yb)
                self.loss.backward()
                self.opt.step()
                self.opt.zero_grad(set_to_none=True)
                self.event("after_step")
            self.event("after_epoch")


if __name__ == "__main__":
    torch.manual_seed(0)
    images, labels = torch.randn(2048, 3, 32, 32), torch.randint(0, 10, (2048,))
    data = [(images[i : i + 64], labels[i : i + 64]) for i in range(0, 1536, 64)]
    valid = [(images[i : i + 128], labels[i : i + 128]) for i in range(1536, 2048, 128)]
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                          nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
    Learner(model, data, valid, [Recorder(), OneCycle(), Validate()]).fit(3)
