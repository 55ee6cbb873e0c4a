"""CLEAN: an Accelerate-like wrapper (`prepare`, `backward`, `clip_grad_norm_`, `autocast`) with
CPU bf16 autocast, gradient clipping and a linear warmup scheduler; logs every 100 steps.
Nothing is planted (`--fixed` changes nothing).
"""

import contextlib

import torch
from torch import nn


class Accelerator:
    def __init__(self, mixed_precision="bf16"):
        self.mixed_precision = mixed_precision

    def prepare(self, *objs):
        return objs

    def autocast(self):
        if self.mixed_precision == "bf16":
            return torch.autocast("cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def backward(self, loss):
        loss.backward()

    def clip_grad_norm_(self, params, max_norm):
        return nn.utils.clip_grad_norm_(params, max_norm)


def main():
    torch.manual_seed(0)
    acc = Accelerator()
    model = nn.Sequential(nn.Linear(128, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(),
                          nn.Linear(512, 8))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 100))
    model, opt, sched = acc.prepare(model, opt, sched)
    x, y = torch.randn(16384, 128), torch.randint(0, 8, (16384,))
    for step, (xb, yb) in enumerate(zip(x.split(64), y.split(64))):
        with acc.autocast():
            loss = nn.functional.cross_entropy(model(xb).float(), yb)
        acc.backward(loss)
        acc.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        if step % 100 == 0:
            print(step, loss.item())


if __name__ == "__main__":
    main()
