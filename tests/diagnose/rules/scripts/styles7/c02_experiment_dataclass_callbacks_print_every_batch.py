"""A class-based `Experiment` configured by nested dataclasses and driven by callbacks
(`on_fit_start`, `on_batch_end`, `on_epoch_end`), for a small CNN on synthetic 16x16 images.

Planted: the `ConsoleLogger` callback's `every` defaults to 1, so each batch prints the whole
metrics dict, whose values are tensors (their repr is formatted every batch). --fixed: every=100
and the values are floats.
"""

import sys
from dataclasses import dataclass, field

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


@dataclass
class OptimConfig:
    lr: float = 3e-3
    weight_decay: float = 1e-4


@dataclass
class DataConfig:
    n: int = 4096
    batch_size: int = 64


@dataclass
class ExperimentConfig:
    epochs: int = 3
    optim: OptimConfig = field(default_factory=OptimConfig)
    data: DataConfig = field(default_factory=DataConfig)


class Callback:
    def on_fit_start(self, exp):
        pass

    def on_batch_end(self, exp, metrics):
        pass

    def on_epoch_end(self, exp, epoch):
        pass


class ConsoleLogger(Callback):
    def __init__(self, every=100 if FIXED else 1):
        self.every = every

    def on_batch_end(self, exp, metrics):
        if exp.global_step % self.every == 0:
            shown = {k: float(v) for k, v in metrics.items()} if FIXED else metrics
            print(f"[{exp.global_step}] {shown}")


class EpochTimer(Callback):
    def on_epoch_end(self, exp, epoch):
        print(f"epoch {epoch} done after {exp.global_step} steps")


class Experiment:
    def __init__(self, cfg, callbacks):
        self.cfg, self.callbacks, self.global_step = cfg, callbacks, 0
        self.model = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
            nn.Flatten(), nn.Linear(32, 10),
        )
        self.opt = torch.optim.AdamW(self.model.parameters(), **vars(cfg.optim))
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(cfg.data.n, 3, 16, 16, generator=g)
        self.y = torch.randint(0, 10, (cfg.data.n,), generator=g)

    def emit(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(self, *args)

    def fit(self):
        self.emit("on_fit_start")
        bs = self.cfg.data.batch_size
        for epoch in range(self.cfg.epochs):
            order = torch.randperm(self.cfg.data.n)
            for i in range(0, self.cfg.data.n, bs):
                idx = order[i : i + bs]
                logits = self.model(self.x[idx])
                loss = nn.functional.cross_entropy(logits, self.y[idx])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                self.global_step += 1
                acc = (logits.argmax(1) == self.y[idx]).float().mean()
                self.emit("on_batch_end", {"loss": loss.detach(), "acc": acc})
            self.emit("on_epoch_end", epoch)


if __name__ == "__main__":
    torch.manual_seed(0)
    Experiment(ExperimentConfig(), [ConsoleLogger(), EpochTimer()]).fit()
