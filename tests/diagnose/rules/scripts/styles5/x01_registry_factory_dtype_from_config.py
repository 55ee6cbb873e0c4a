"""A config-driven classifier: `main()` parses argparse options into a config dict, a small
registry builds the model by name, and a `Trainer` class in the same file runs the epochs. The
model factory takes a `dtype` string from the config, and the config's default is "float64"
("for numerical stability", says the comment the author left).

Planted: every parameter and batch is float64. --fixed: the default is "float32".
"""

import argparse

import torch
from torch import nn

MODELS = {}


def register(name):
    def wrap(cls):
        MODELS[name] = cls
        return cls

    return wrap


@register("mlp")
class WideMLP(nn.Module):
    def __init__(self, features, classes, width=256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, width), nn.GELU(), nn.Linear(width, width),
                                 nn.GELU(), nn.Linear(width, classes))

    def forward(self, x):
        return self.net(x)


def build_model(cfg):
    model = MODELS[cfg["model"]](cfg["features"], cfg["classes"])
    return model.to(dtype=getattr(torch, cfg["dtype"]))


class Trainer:
    def __init__(self, cfg, model):
        self.cfg, self.model = cfg, model
        self.opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
        self.dtype = getattr(torch, cfg["dtype"])

    def batches(self, x, y):
        order = torch.randperm(len(x))
        for idx in order.split(self.cfg["batch_size"]):
            yield x[idx].to(self.dtype), y[idx]

    def fit(self, x, y):
        for epoch in range(self.cfg["epochs"]):
            for xb, yb in self.batches(x, y):
                loss = nn.functional.cross_entropy(self.model(xb), yb)
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                self.opt.step()
            print(f"epoch {epoch}: {loss.item():.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--dtype", default="float64")  # for numerical stability
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--fixed", action="store_true")
    args = parser.parse_args()
    cfg = {"model": args.model, "features": 128, "classes": 10, "lr": 1e-3, "batch_size": 128,
           "epochs": args.epochs, "dtype": "float32" if args.fixed else args.dtype}
    torch.manual_seed(0)
    x, y = torch.randn(6400, cfg["features"]), torch.randint(0, cfg["classes"], (6400,))
    Trainer(cfg, build_model(cfg)).fit(x, y)


if __name__ == "__main__":
    main()
