"""A metrics logger object written by the author: every step appends a record dict (`step`,
`lr`, `loss`, `grad_norm`) to `self.records`, and at the end of each epoch it prints the epoch's
mean loss and the max gradient norm from those records. An autoencoder on generated images.

Planted: the record stores `loss` (the tensor) rather than `loss.item()`/`loss.detach()`, so
every step's record keeps that step's whole autograd graph alive: memory grows every step.
--fixed: the record keeps `loss.detach()`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class MetricLogger:
    def __init__(self):
        self.records = []

    def log(self, **record):
        self.records.append(record)

    def epoch_summary(self, epoch, steps):
        recent = self.records[-steps:]
        mean = torch.stack([r["loss"] for r in recent]).mean()
        worst = max(float(r["grad_norm"]) for r in recent)
        print(f"epoch {epoch}: loss {float(mean):.4f}, max grad norm {worst:.2f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    images = torch.rand(4096, 1, 24, 24)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
        nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.ReLU(),
        nn.ConvTranspose2d(16, 1, 4, stride=2, padding=1), nn.Sigmoid(),
    )
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    logger = MetricLogger()
    steps = 0
    for epoch in range(3):
        perm = torch.randperm(len(images))
        for start in range(0, len(images), 64):
            xb = images[perm[start : start + 64]]
            loss = nn.functional.binary_cross_entropy(model(xb), xb)
            opt.zero_grad()
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            logger.log(step=steps, lr=opt.param_groups[0]["lr"],
                       loss=loss.detach() if FIXED else loss, grad_norm=norm)
            steps += 1
        logger.epoch_summary(epoch, len(images) // 64)
