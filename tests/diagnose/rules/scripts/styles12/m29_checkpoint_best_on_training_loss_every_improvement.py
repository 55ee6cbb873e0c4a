"""Checkpoint-best written by a step hook: after each step, if the smoothed training loss is the
best so far, the model and optimizer state are saved to `best.pt` (for "resume from the best
point"). A 1M-parameter MLP regressor with Adam (3M floats of state).

Planted: the smoothed training loss keeps falling, so "a new best" happens nearly every step and
`torch.save` writes the model and optimizer state (about 12 MB) to disk almost every step.
--fixed: the best checkpoint is written at most once per epoch, at the epoch's end.
"""

import os
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class BestCheckpoint:
    def __init__(self, path):
        self.path, self.best, self.pending = path, float("inf"), None

    def after_step(self, loss, model, opt):
        if loss < self.best:
            self.best = loss
            state = {"model": model.state_dict(), "opt": opt.state_dict(), "loss": loss}
            if FIXED:
                self.pending = state
            else:
                torch.save(state, self.path)

    def after_epoch(self):
        if self.pending is not None:
            torch.save(self.pending, self.path)
            self.pending = None


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6000, 256)
    y = x[:, :8].sum(1, keepdim=True).tanh()
    model = nn.Sequential(
        nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 1)
    )
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = BestCheckpoint(os.path.join(tmp, "best.pt"))
        smooth = None
        for epoch in range(3):
            for idx in torch.randperm(len(x)).split(128):
                loss = nn.functional.mse_loss(model(x[idx]), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                smooth = float(loss) if smooth is None else 0.95 * smooth + 0.05 * float(loss)
                ckpt.after_step(smooth, model, opt)
            ckpt.after_epoch()
            print("epoch", epoch, smooth)
