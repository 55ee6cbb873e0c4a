"""Callback-style loop; the validation callback runs on the whole validation set after every step.

Planted: ValidationCallback(every=1). --fixed: every=1000 (once per run).
"""

import sys

import torch
from torch import nn


class ValidationCallback:
    def __init__(self, data, every):
        self.data, self.every = data, every

    def on_step_end(self, step, net):
        if step % self.every:
            return
        net.eval()
        with torch.inference_mode():
            x, y = self.data
            acc = (net(x).argmax(1) == y).float().mean()
        net.train()
        return acc


def loop(net, opt, train, callbacks, epochs):
    step = 0
    for _ in range(epochs):
        for xb, yb in train:
            opt.zero_grad()
            nn.functional.cross_entropy(net(xb), yb).backward()
            opt.step()
            step += 1
            for cb in callbacks:
                cb.on_step_end(step, net)


def main():
    torch.manual_seed(0)
    x, y = torch.randn(10000, 64), torch.randint(0, 4, (10000,))
    net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 4))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, foreach=True)
    every = 1000 if "--fixed" in sys.argv else 1
    train = list(zip(x[:2048].split(64), y[:2048].split(64)))
    loop(net, opt, train, [ValidationCallback((x[2048:], y[2048:]), every)], epochs=3)


if __name__ == "__main__":
    main()
