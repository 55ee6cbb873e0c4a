"""An epoch loop with a list of end-of-epoch callbacks, each a `functools.partial` of a plain
function (`partial(validate, model, val_x, val_y)`, `partial(log_lr, sched)`). A forecaster
over audio-like frames made with `unfold`.

Planted: `validate` runs the model on the 16k-window validation set in `eval()` mode but
without `no_grad`/`inference_mode`: every validation forward records its autograd graph and
keeps the activations for a backward that never comes. --fixed: `validate` runs under
`torch.inference_mode()`.
"""

import contextlib
import sys
from functools import partial

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def validate(model, x, y):
    model.eval()
    with torch.inference_mode() if FIXED else contextlib.nullcontext():
        losses = [
            nn.functional.mse_loss(model(x[i : i + 512]), y[i : i + 512])
            for i in range(0, len(x), 512)
        ]
    model.train()
    print("val", float(sum(losses) / len(losses)))


def log_lr(sched):
    print("lr", sched.get_last_lr()[0])


if __name__ == "__main__":
    torch.manual_seed(0)
    signal = torch.sin(torch.arange(40000) / 13.0) + 0.1 * torch.randn(40000)
    frames = signal.unfold(0, 65, 2)
    x, y = frames[:, :64], frames[:, 64:]
    train_x, train_y, val_x, val_y = x[:3000], y[:3000], x[3000:19000], y[3000:19000]
    model = nn.Sequential(
        nn.Linear(64, 512),
        nn.GELU(),
        nn.Dropout(0.1),
        nn.Linear(512, 512),
        nn.GELU(),
        nn.Linear(512, 1),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.9)
    callbacks = [partial(validate, model, val_x, val_y), partial(log_lr, sched)]
    for _epoch in range(6):
        for idx in torch.randperm(len(train_x)).split(64):
            loss = nn.functional.mse_loss(model(train_x[idx]), train_y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
        for callback in callbacks:
            callback()
