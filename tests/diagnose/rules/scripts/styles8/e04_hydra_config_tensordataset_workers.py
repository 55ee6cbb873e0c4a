"""Hydra/OmegaConf-style configuration: a nested dict of defaults merged with `key.sub=value`
overrides from the command line, an attribute-access wrapper (`cfg.data.num_workers`), and
`instantiate`-like construction of the model and optimizer from `_target_` strings. A tabular
regression MLP on tensors built in memory.

Planted: the data config asks for `num_workers: 4` for a `TensorDataset` that already lives in
memory, so each batch is sliced in a worker and handed back through shared memory, which costs
more than slicing it in the training process. --fixed: `num_workers: 0`, and the batches are
index slices of the tensors (no per-row fetch).
"""

import copy
import importlib
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv

DEFAULTS = {
    "data": {"rows": 60000, "features": 24, "batch_size": 128, "num_workers": 4},
    "model": {"_target_": "torch.nn.Sequential", "hidden": 64},
    "optim": {"_target_": "torch.optim.Adam", "lr": 1e-3},
    "trainer": {"max_epochs": 2, "seed": 0},
}


class Node(dict):
    __getattr__ = dict.__getitem__


def to_node(d):
    return Node({k: to_node(v) if isinstance(v, dict) else v for k, v in d.items()})


def merge_overrides(cfg, overrides):
    cfg = copy.deepcopy(cfg)
    for item in overrides:
        key, value = item.split("=", 1)
        *path, leaf = key.split(".")
        node = cfg
        for part in path:
            node = node[part]
        node[leaf] = type(node[leaf])(value)
    return to_node(cfg)


def locate(target):
    module, name = target.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


if __name__ == "__main__":
    overrides = [a for a in sys.argv[1:] if "=" in a]
    if FIXED:
        overrides.append("data.num_workers=0")
    cfg = merge_overrides(DEFAULTS, overrides)
    torch.manual_seed(cfg.trainer.seed)
    x = torch.randn(cfg.data.rows, cfg.data.features)
    y = (x[:, :3].sum(1, keepdim=True) ** 2) * 0.1
    loader = DataLoader(
        TensorDataset(x, y),
        batch_size=cfg.data.batch_size,
        shuffle=True,
        num_workers=cfg.data.num_workers,
        persistent_workers=cfg.data.num_workers > 0,
    )
    h = cfg.model.hidden
    model = locate(cfg.model._target_)(
        nn.Linear(cfg.data.features, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 1)
    )
    optim = locate(cfg.optim._target_)(model.parameters(), lr=cfg.optim.lr)
    for epoch in range(cfg.trainer.max_epochs):
        if FIXED:
            order = torch.randperm(len(x)).split(cfg.data.batch_size)
            loader = ((x[idx], y[idx]) for idx in order)
        for xb, yb in loader:
            loss = nn.functional.mse_loss(model(xb), yb)
            optim.zero_grad()
            loss.backward()
            optim.step()
        print(f"epoch={epoch} loss={loss.item():.4f}")
