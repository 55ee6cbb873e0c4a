"""Mixed precision written by hand on CPU: bf16 autocast for the forward and a hand-rolled
dynamic loss scaler (a port of the author's fp16 GPU code). Before each step the scaler checks
every gradient for inf/NaN with `if not torch.isfinite(p.grad).all(): ...`, one Python `if`
on a tensor per parameter.

Planted: one host read per parameter per step (18 per step). --fixed: one `torch._foreach_norm`
and an isfinite flag kept on the device: a non-finite step zeroes the gradients, no read.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class LossScaler:
    def __init__(self, init_scale=2.0 ** 12, growth_interval=200):
        self.scale, self.good_steps, self.growth_interval = init_scale, 0, growth_interval
        if FIXED:
            self.scale = torch.tensor(init_scale)

    def grads_finite(self, params):
        grads = [p.grad for p in params if p.grad is not None]
        for g in grads:
            if not torch.isfinite(g).all():
                return False
        return True

    def step(self, optimizer, params):
        for p in params:
            if p.grad is not None:
                p.grad.div_(self.scale)
        if FIXED:  # no host read: a non-finite step zeroes the gradients (plain SGD: no update)
            grads = [p.grad for p in params if p.grad is not None]
            finite = torch.isfinite(torch.stack(torch._foreach_norm(grads))).all()
            torch._foreach_mul_(grads, finite.float())
            optimizer.step()
            self.scale = torch.where(finite, self.scale, self.scale / 2)
            return finite
        if not self.grads_finite(params):
            self.scale /= 2
            self.good_steps = 0
            return False
        optimizer.step()
        self.good_steps += 1
        if self.good_steps % self.growth_interval == 0:
            self.scale *= 2
        return True


def main():
    torch.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [nn.Linear(128, 128), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(128, 10))
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=0.05)
    scaler = LossScaler()
    x, y = torch.randn(8192, 128), torch.randint(0, 10, (8192,))
    for epoch in range(2):
        for idx in torch.randperm(len(x)).split(256):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            (loss * scaler.scale).backward()
            scaler.step(opt, params)
        print(epoch, loss.item(), float(scaler.scale))


if __name__ == "__main__":
    main()
