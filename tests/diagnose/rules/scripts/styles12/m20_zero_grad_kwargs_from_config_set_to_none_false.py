"""A training script whose every call is parameterised from one config dict, down to
`optimizer.zero_grad(**cfg["zero_grad"])`. A wide two-layer MLP (about 6M parameters) trained
with SGD and momentum on generated data.

Planted: the config says `"zero_grad": {"set_to_none": False}` (copied from an old recipe):
every gradient tensor is kept, filled with zeros each step and then accumulated into, 6M floats
written for nothing each step. --fixed: `"zero_grad": {}` (set to None, the default).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv

CFG = {
    "model": {"inputs": 512, "hidden": 2048, "classes": 100},
    "sgd": {"lr": 0.01, "momentum": 0.9},
    "zero_grad": {} if FIXED else {"set_to_none": False},
    "loader": {"batch": 32, "epochs": 2},
}


if __name__ == "__main__":
    torch.manual_seed(0)
    m = CFG["model"]
    model = nn.Sequential(
        nn.Linear(m["inputs"], m["hidden"]),
        nn.ReLU(),
        nn.Linear(m["hidden"], m["hidden"]),
        nn.ReLU(),
        nn.Linear(m["hidden"], m["classes"]),
    )
    opt = torch.optim.SGD(model.parameters(), **CFG["sgd"])
    x = torch.randn(3000, m["inputs"])
    y = x[:, : m["classes"]].argmax(1)
    for epoch in range(CFG["loader"]["epochs"]):
        for idx in torch.randperm(len(x)).split(CFG["loader"]["batch"]):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad(**CFG["zero_grad"])
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
