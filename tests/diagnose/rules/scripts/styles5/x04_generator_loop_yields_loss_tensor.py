"""The training loop is a generator function: `train_steps()` yields a metrics dict after each
optimizer step, and the caller drives it, logging and collecting the history. The generator
yields the loss tensor itself, and the caller appends it to `history["loss"]` for a plot at the
end: every step's graph stays alive with it.

Planted: the loss tensors (with their autograd graphs) are kept for the whole run. --fixed: the
generator yields `loss.detach()`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def train_steps(model, opt, data, epochs):
    x, y = data
    for epoch in range(epochs):
        for idx in torch.randperm(len(x)).split(64):
            out = model(x[idx])
            loss = nn.functional.smooth_l1_loss(out, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            yield {"epoch": epoch, "loss": loss.detach() if FIXED else loss}


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = (torch.randn(16384, 64), torch.randn(16384, 8))
    history = {"loss": [], "epoch": []}
    for metrics in train_steps(model, opt, data, epochs=2):
        for key, value in metrics.items():
            history[key].append(value)
    print("final", float(history["loss"][-1]), "steps", len(history["loss"]))


if __name__ == "__main__":
    main()
