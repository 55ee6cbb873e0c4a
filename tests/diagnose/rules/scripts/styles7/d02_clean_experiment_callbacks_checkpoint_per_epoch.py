"""CLEAN: a class-based `Experiment` with config dataclasses and callbacks: a console logger every
100 steps with float values, a checkpoint callback at each epoch's end, validation per epoch
under no_grad in eval mode; a small CNN. Nothing is planted (`--fixed` changes nothing).
"""

import os
import tempfile
from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class Optim:
    lr: float = 2e-3


@dataclass
class Config:
    epochs: int = 3
    batch_size: int = 64
    optim: Optim = field(default_factory=Optim)
    out_dir: str = field(default_factory=tempfile.mkdtemp)


class Logger:
    def on_batch_end(self, exp, loss):
        if exp.step % 100 == 0:
            print(exp.step, float(loss))

    def on_epoch_end(self, exp):
        pass


class Checkpoint:
    def on_batch_end(self, exp, loss):
        pass

    def on_epoch_end(self, exp):
        torch.save(exp.model.state_dict(), os.path.join(exp.cfg.out_dir, "last.pt"))


class Experiment:
    def __init__(self, cfg, callbacks):
        self.cfg, self.callbacks, self.step = cfg, callbacks, 0
        self.model = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Dropout(0.2), nn.Linear(32, 10),
        )
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg.optim.lr)
        g = torch.Generator().manual_seed(0)
        self.x, self.y = torch.randn(4000, 3, 16, 16, generator=g), torch.randint(0, 10, (4000,), generator=g)
        self.vx, self.vy = torch.randn(800, 3, 16, 16, generator=g), torch.randint(0, 10, (800,), generator=g)

    def validate(self):
        self.model.eval()
        with torch.no_grad():
            acc = (self.model(self.vx).argmax(1) == self.vy).float().mean().item()
        self.model.train()
        return acc

    def fit(self):
        for epoch in range(self.cfg.epochs):
            for idx in torch.randperm(len(self.x)).split(self.cfg.batch_size):
                loss = nn.functional.cross_entropy(self.model(self.x[idx]), self.y[idx])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                self.step += 1
                for cb in self.callbacks:
                    cb.on_batch_end(self, loss.detach())
            print("epoch", epoch, "val acc", self.validate())
            for cb in self.callbacks:
                cb.on_epoch_end(self)


if __name__ == "__main__":
    torch.manual_seed(0)
    Experiment(Config(), [Logger(), Checkpoint()]).fit()
