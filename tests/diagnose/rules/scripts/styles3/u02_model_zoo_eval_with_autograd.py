"""A model zoo: a dict from names to constructors, the model chosen by name; the per-epoch
validation is a plain function that sets eval() but forgot no_grad/inference_mode, and it runs
on a validation set as large as a tenth of the training set, every 100 steps.

Planted: evaluation with autograd on (graphs built and thrown away). --fixed: inference_mode.
"""

import contextlib
import sys

import torch
from torch import nn

ZOO = {
    "mlp": lambda: nn.Sequential(nn.Linear(96, 384), nn.ReLU(), nn.Linear(384, 384), nn.ReLU(),
                                 nn.Linear(384, 10)),
    "wide": lambda: nn.Sequential(nn.Linear(96, 1024), nn.ReLU(), nn.Linear(1024, 10)),
    "linear": lambda: nn.Linear(96, 10),
}


def validate(model, x, y, fixed):
    model.eval()
    guard = torch.inference_mode() if fixed else contextlib.nullcontext()
    correct = 0
    with guard:
        for xb, yb in zip(x.split(512), y.split(512)):
            correct += (model(xb).argmax(1) == yb).sum()
    model.train()
    return correct / len(x)


def run(name="mlp", fixed=False):
    torch.manual_seed(0)
    model = ZOO[name]()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = torch.randn(20000, 96), torch.randint(0, 10, (20000,))
    vx, vy = torch.randn(4096, 96), torch.randint(0, 10, (4096,))
    for epoch in range(3):
        for step, (xb, yb) in enumerate(zip(x.split(64), y.split(64))):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 100 == 99:
                acc = validate(model, vx, vy, fixed)
        print(f"epoch {epoch} acc {float(acc):.3f}")


if __name__ == "__main__":
    run("mlp", fixed="--fixed" in sys.argv)
