"""A model built from a YAML-like nested dict config through a registry of builder functions
(`@register("mlp")`), the way config-driven research code assembles its experiments. A tabular
regression MLP trained with AdamW on generated data.

Planted: the config's `precision: "double"` is resolved through a lookup table and the built
model and data are moved to float64: every matmul runs in double precision. --fixed:
`precision: "single"` (float32).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv

CONFIG = {
    "model": {"name": "mlp", "args": {"width": 512, "depth": 4, "inputs": 64}},
    "optim": {"name": "adamw", "lr": 1e-3},
    "trainer": {"epochs": 4, "batch": 256, "precision": "single" if FIXED else "double"},
}
BUILDERS = {}
PRECISIONS = {"single": torch.float32, "double": torch.float64, "half": torch.float16}


def register(name):
    def wrap(fn):
        BUILDERS[name] = fn
        return fn

    return wrap


@register("mlp")
def build_mlp(width, depth, inputs):
    layers, size = [], inputs
    for _ in range(depth):
        layers += [nn.Linear(size, width), nn.GELU()]
        size = width
    return nn.Sequential(*layers, nn.Linear(size, 1))


def build(config):
    model = BUILDERS[config["model"]["name"]](**config["model"]["args"])
    dtype = PRECISIONS[config["trainer"]["precision"]]
    return model.to(dtype), dtype


if __name__ == "__main__":
    torch.manual_seed(0)
    model, dtype = build(CONFIG)
    x = torch.randn(8192, 64).to(dtype)
    y = (x[:, :8].sum(1, keepdim=True)).sin()
    opt = torch.optim.AdamW(model.parameters(), lr=CONFIG["optim"]["lr"])
    for epoch in range(CONFIG["trainer"]["epochs"]):
        for idx in torch.randperm(len(x)).split(CONFIG["trainer"]["batch"]):
            loss = nn.functional.mse_loss(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
