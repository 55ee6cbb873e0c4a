"""A run driven by a config dataclass and registries: `MODELS` and `OPTIMIZERS` map names to
builder functions registered with decorators, the config names what to build and holds each
builder's keyword arguments, and `--set key=value` overrides fields. A residual MLP classifier.

Planted: the optimizer config's kwargs carry `foreach=False` (copied from a reproducibility
recipe), so AdamW updates the 20 parameter tensors one at a time. --fixed: the kwargs ask for
`fused=True` (one kernel over all of them).
"""

import dataclasses
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
MODELS, OPTIMIZERS = {}, {}


def register(table, name):
    def wrap(fn):
        table[name] = fn
        return fn

    return wrap


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(width, width), nn.Linear(width, width)

    def forward(self, x):
        return x + self.fc2(nn.functional.relu(self.fc1(x)))


@register(MODELS, "resmlp")
def resmlp(width=64, depth=4, classes=4):
    return nn.Sequential(nn.Linear(16, width), *[Block(width) for _ in range(depth)],
                         nn.Linear(width, classes))


@register(OPTIMIZERS, "adamw")
def adamw(params, **kwargs):
    return torch.optim.AdamW(params, **kwargs)


@dataclasses.dataclass
class Config:
    model: str = "resmlp"
    model_kwargs: dict = dataclasses.field(default_factory=lambda: {"width": 64, "depth": 4})
    optimizer: str = "adamw"
    optimizer_kwargs: dict = dataclasses.field(
        default_factory=lambda: {"lr": 1e-3, "weight_decay": 0.01, "foreach": False}
    )
    batch_size: int = 32
    epochs: int = 3


def parse(argv):
    cfg = Config()
    for arg in argv:
        if arg.startswith("--set="):
            key, value = arg[len("--set="):].split("=")
            setattr(cfg, key, type(getattr(cfg, key))(value))
    if FIXED:
        cfg.optimizer_kwargs.pop("foreach")
        cfg.optimizer_kwargs["fused"] = True
    return cfg


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = parse(sys.argv[1:])
    model = MODELS[cfg.model](**cfg.model_kwargs)
    opt = OPTIMIZERS[cfg.optimizer](model.parameters(), **cfg.optimizer_kwargs)
    x = torch.randn(6000, 16)
    y = (x[:, :4].sum(1).sign() + (x[:, 4] > 0) * 2 + 1).long().clamp(0, 3)
    for epoch in range(cfg.epochs):
        perm = torch.randperm(len(x))
        for start in range(0, len(x), cfg.batch_size):
            idx = perm[start : start + cfg.batch_size]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
