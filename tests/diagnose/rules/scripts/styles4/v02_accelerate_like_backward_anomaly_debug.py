"""An Accelerate-like wrapper: `accelerator.prepare(...)` and `accelerator.backward(loss)`. The
wrapper takes a `debug` flag from the kwargs handlers dict; its default is on, and with it the
wrapper switches autograd anomaly detection on for the whole run.

Planted: torch.autograd.set_detect_anomaly(True) left on by the wrapper's default. --fixed: the
script passes debug=False, as a release run would.
"""

import sys

import torch
from torch import nn


class Accelerator:
    def __init__(self, mixed_precision="no", **kwargs):
        self.mixed_precision = mixed_precision
        self.debug = kwargs.get("debug", True)
        if self.debug:
            torch.autograd.set_detect_anomaly(True)
        self.device = torch.device("cpu")

    def prepare(self, *objects):
        return tuple(o.to(self.device) if isinstance(o, nn.Module) else o for o in objects)

    def backward(self, loss):
        loss.backward()

    def print(self, *args):
        print(*args)


def batches(steps, batch_size=64):
    g = torch.Generator().manual_seed(0)
    for _ in range(steps):
        x = torch.randn(batch_size, 48, generator=g)
        yield x, (x[:, :3].sum(1) > 0).long()


def main():
    accelerator = Accelerator(debug=False) if "--fixed" in sys.argv else Accelerator()
    model = nn.Sequential(nn.Linear(48, 256), nn.GELU(), nn.LayerNorm(256), nn.Linear(256, 256),
                          nn.GELU(), nn.Linear(256, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model, optimizer = accelerator.prepare(model, optimizer)
    for step, (x, y) in enumerate(batches(600)):
        loss = nn.functional.cross_entropy(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % 200 == 0:
            accelerator.print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
