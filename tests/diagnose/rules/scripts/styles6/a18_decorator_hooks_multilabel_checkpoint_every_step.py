"""A decorator-registered callback system (`@callback("on_step_end")` adds functions to a
module-level registry, `emit(event, ctx)` calls them) around a multi-label text tagger
(bag-of-ngrams hashed features, 30 tags, BCE), with a "resume from last checkpoint" callback.

Planted: the "save_last" callback writes model+optimizer state with torch.save on every step
end (the author wanted crash-safety). --fixed: on_epoch_end only.
"""

import os
import sys
import tempfile
from collections import defaultdict

import torch
from torch import nn

SAVE_EVENT = "on_epoch_end" if "--fixed" in sys.argv else "on_step_end"
REGISTRY = defaultdict(list)
FEATURES, TAGS = 2 ** 14, 30


def callback(event):
    def add(fn):
        REGISTRY[event].append(fn)
        return fn

    return add


def emit(event, ctx):
    for fn in REGISTRY[event]:
        fn(ctx)


@callback(SAVE_EVENT)
def save_last(ctx):
    torch.save({"model": ctx["model"].state_dict(), "opt": ctx["opt"].state_dict(),
                "step": ctx["step"]}, os.path.join(ctx["dir"], "last.pt"))


@callback("on_epoch_end")
def report(ctx):
    print(f"epoch {ctx['epoch']} loss {ctx['loss']:.4f}")


def main():
    torch.manual_seed(0)
    x = (torch.rand(6000, FEATURES) < 0.002).float()
    w = torch.randn(FEATURES, TAGS)
    y = ((x @ w) > 0.8).float()
    model = nn.Sequential(nn.Linear(FEATURES, 128), nn.ReLU(), nn.Linear(128, TAGS))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ctx = {"model": model, "opt": opt, "step": 0, "dir": tempfile.mkdtemp()}
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(64):
            loss = nn.functional.binary_cross_entropy_with_logits(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            ctx["step"] += 1
            emit("on_step_end", ctx)
        ctx.update(epoch=epoch, loss=loss.item())
        emit("on_epoch_end", ctx)


if __name__ == "__main__":
    main()
