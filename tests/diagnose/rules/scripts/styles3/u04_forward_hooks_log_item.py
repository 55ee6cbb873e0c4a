"""Logging through forward hooks: every Linear layer gets a hook that records the mean absolute
activation in a dict of Python floats (for a dashboard) on every forward.

Planted: `.item()` in a forward hook, several host reads per step. --fixed: the hooks keep
detached tensors and read them once per 100 steps.
"""

import sys
from collections import defaultdict

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
STATS = defaultdict(list)


def make_hook(name):
    def hook(module, inputs, output):
        if FIXED:
            STATS[name].append(output.detach().abs().mean())
        else:
            STATS[name].append(output.detach().abs().mean().item())
    return hook


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(),
                          nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 5))
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            module.register_forward_hook(make_hook(name))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(12800, 64), torch.randint(0, 5, (12800,))
    for epoch in range(3):
        for step, (xb, yb) in enumerate(zip(x.split(64), y.split(64))):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % 100 == 0:
                summary = {k: float(torch.as_tensor(v[-1])) for k, v in STATS.items()}
                STATS.clear()
                print(epoch, step, summary)


if __name__ == "__main__":
    main()
