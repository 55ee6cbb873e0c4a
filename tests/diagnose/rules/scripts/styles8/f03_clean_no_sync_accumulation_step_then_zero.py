"""Clean: gradient accumulation over 4 micro-batches with a DDP-like `no_sync()` context of the
author's on all but the last micro-batch; the window ends with clip, step, zero_grad. A conv
classifier of 1-D signals."""

import contextlib

import torch
from torch import nn

ACCUM = 4


class LocalDDP(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module

    @contextlib.contextmanager
    def no_sync(self):
        yield

    def forward(self, x):
        return self.module(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8192, 1, 96)
    y = (x[:, 0, :48].mean(1) > 0).long()
    model = LocalDDP(
        nn.Sequential(
            nn.Conv1d(1, 32, 7, padding=3),
            nn.ReLU(),
            nn.Conv1d(32, 32, 7, padding=3),
            nn.ReLU(),
            nn.AdaptiveMaxPool1d(1),
            nn.Flatten(),
            nn.Linear(32, 2),
        )
    )
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for i, idx in enumerate(torch.randperm(len(x)).split(32)):
            last = (i + 1) % ACCUM == 0
            with contextlib.nullcontext() if last else model.no_sync():
                (nn.functional.cross_entropy(model(x[idx]), y[idx]) / ACCUM).backward()
            if last:
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                opt.zero_grad(set_to_none=True)
        print("epoch", epoch)
