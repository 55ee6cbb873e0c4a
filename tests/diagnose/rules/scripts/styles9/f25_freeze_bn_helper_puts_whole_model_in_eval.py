"""Fine-tuning a pretrained-like conv net with frozen BatchNorm statistics: a `freeze_bn(model)`
helper is called at the start of every epoch (after `model.train()`), as detection codebases do,
so the BatchNorm layers keep their running statistics while the rest trains. The net also has
Dropout before its head.

Planted: `freeze_bn` calls `model.eval()` on the whole model instead of `m.eval()` on each
BatchNorm layer, so Dropout is off and the whole net trains in eval mode.
--fixed: only the BatchNorm modules are put in eval mode.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def freeze_bn(model):
    if FIXED:
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.eval()
    else:
        model.eval()


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(3000, 3, 16, 16)
    y = (x[:, 1].mean((1, 2)) > 0).long()
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.Conv2d(16, 32, 3, stride=2), nn.BatchNorm2d(32), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Dropout(0.5), nn.Linear(128, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    for epoch in range(3):
        model.train()
        freeze_bn(model)
        perm = torch.randperm(len(x))
        for start in range(0, len(x), 64):
            idx = perm[start : start + 64]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
