"""A time-series transformer encoder (forecasting the next value) with a `StepHooks` object:
`before_optimizer_step()` advances a warm-up schedule and, since the author "always clears after
the schedule changes", calls `optimizer.zero_grad()`; the loop then calls `optimizer.step()`.

Planted: the gradients are cleared between backward and step: every step updates with no
gradients (only weight decay moves the weights). --fixed: the hook only sets the learning rate;
zero_grad runs before the forward.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class StepHooks:
    def __init__(self, optimizer, warmup, base_lr):
        self.opt, self.warmup, self.base_lr, self.step = optimizer, warmup, base_lr, 0

    def before_optimizer_step(self):
        self.step += 1
        for group in self.opt.param_groups:
            group["lr"] = self.base_lr * min(1.0, self.step / self.warmup)
        if not FIXED:
            self.opt.zero_grad()


class Forecaster(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.inp = nn.Linear(1, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, 64, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        return self.out(self.enc(self.inp(x[..., None]))[:, -1]).squeeze(-1)


def main():
    torch.manual_seed(0)
    t = torch.arange(20000) * 0.05
    series = torch.sin(t) + 0.3 * torch.sin(3.1 * t) + 0.05 * torch.randn(len(t))
    windows = series.unfold(0, 33, 1)
    model = Forecaster()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    hooks = StepHooks(opt, warmup=50, base_lr=1e-3)
    for epoch in range(2):
        for idx in torch.randperm(len(windows))[:4096].split(64):
            w = windows[idx]
            if FIXED:
                opt.zero_grad()
            loss = nn.functional.mse_loss(model(w[:, :-1]), w[:, -1])
            loss.backward()
            hooks.before_optimizer_step()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
