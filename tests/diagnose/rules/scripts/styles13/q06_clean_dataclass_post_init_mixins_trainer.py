"""Clean: a `@dataclass` config whose `__post_init__` builds the model (float32, `train()` mode
kept), and a trainer assembled from three mixins (data: batches sliced from tensors; optim:
AdamW with `foreach=True` and `zero_grad(set_to_none=True)` before backward; loop: one
backward, step, validation once per epoch under `inference_mode` in `eval()` mode, a
checkpoint at the end of each epoch). (`--fixed` changes nothing.)
"""

import io
from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class Config:
    inputs: int = 24
    hidden: int = 256
    classes: int = 5
    lr: float = 1e-3
    model: nn.Module = field(init=False)

    def __post_init__(self):
        self.model = nn.Sequential(
            nn.Linear(self.inputs, self.hidden),
            nn.BatchNorm1d(self.hidden),
            nn.ReLU(),
            nn.Dropout(0.2),
            nn.Linear(self.hidden, self.classes),
        )


class DataMixin:
    def batches(self):
        for idx in torch.randperm(len(self.x)).split(128):
            yield self.x[idx], self.y[idx]


class OptimMixin:
    def make_optimizer(self):
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=self.cfg.lr, foreach=True)

    def update(self, loss):
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()


class LoopMixin:
    def fit(self, epochs):
        self.make_optimizer()
        for epoch in range(epochs):
            for x, y in self.batches():
                loss = nn.functional.cross_entropy(self.model(x), y)
                self.update(loss)
            self.model.eval()
            with torch.inference_mode():
                acc = (self.model(self.vx).argmax(1) == self.vy).float().mean()
            self.model.train()
            torch.save(self.model.state_dict(), io.BytesIO())
            print("epoch", epoch, float(loss), float(acc))


class Trainer(DataMixin, OptimMixin, LoopMixin):
    def __init__(self, cfg, x, y, vx, vy):
        self.cfg, self.model = cfg, cfg.model
        self.x, self.y, self.vx, self.vy = x, y, vx, vy


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(10000, 24)
    y = x[:, :5].argmax(1)
    Trainer(Config(), x[:8000], y[:8000], x[8000:], y[8000:]).fit(4)
