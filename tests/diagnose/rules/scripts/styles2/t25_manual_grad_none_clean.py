"""A clean program in an unusual style: the optimizer's zero_grad is never called; the gradients
are cleared by hand (p.grad = None for every parameter, before the forward) and a separate
hand-written weight-decay update runs under torch.no_grad().

Planted: nothing (a control for false alarms: D221 'gradients never cleared' must not fire, and
no warnings). --fixed: the same program.
"""

import torch
from torch import nn


def decay_(params, rate=1e-4):
    with torch.no_grad():
        torch._foreach_mul_(params, 1 - rate)


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(40, 256), nn.ReLU(), nn.Linear(256, 4))
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=0.05, momentum=0.9, foreach=True)
    x, y = torch.randn(6000, 40), torch.randint(0, 4, (6000,))
    for epoch in range(3):
        total = torch.zeros(())
        for idx in torch.randperm(len(x)).split(128):
            for p in params:
                p.grad = None
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            decay_(params)
            total += loss.detach()
        print(f"epoch {epoch}: {total.item():.3f}")


if __name__ == "__main__":
    main()
