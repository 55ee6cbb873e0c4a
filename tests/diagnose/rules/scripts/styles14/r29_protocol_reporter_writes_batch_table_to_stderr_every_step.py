"""Progress reporting goes through a `Reporter` typed by a `typing.Protocol` (`report(step,
metrics)`); the concrete reporter writes a formatted row to stderr. A small MLP classifier.

Planted: the training loop calls `reporter.report(...)` after every step and the reporter prints
a row of the batch's loss and its first predictions (formatted tensors) to stderr with
`print(..., file=sys.stderr, flush=True)`: formatting and writing take a large share of each
short step.
--fixed: the reporter is called every 200 steps.
"""

import sys
from typing import Protocol

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Reporter(Protocol):
    def report(self, step: int, metrics: dict) -> None: ...


class StderrReporter:
    def report(self, step, metrics):
        row = " | ".join(f"{k}={v}" for k, v in metrics.items())
        print(f"[{step:6d}] {row}", file=sys.stderr, flush=True)


def fit(model, opt, x, y, reporter: Reporter, every):
    step = 0
    for _epoch in range(3):
        for idx in torch.randperm(len(x)).split(64):
            logits = model(x[idx])
            loss = nn.functional.cross_entropy(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % every == 0:
                reporter.report(
                    step,
                    {
                        "loss": loss,
                        "probs": logits[:4].softmax(-1),
                        "lr": opt.param_groups[0]["lr"],
                    },
                )


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8192, 32)
    y = (x[:, 0] > 0).long()
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2))
    fit(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        x,
        y,
        StderrReporter(),
        every=200 if FIXED else 1,
    )
