"""Mixed precision on CPU: the forward runs under `torch.autocast("cpu", dtype=torch.bfloat16)`,
the loss in float32, a cosine learning-rate schedule, and a validation pass over a held-out set
after every 50 training steps with the same autocast context. A residual MLP classifier.

Planted: the validation function switches to `model.eval()` and autocast but not to
`torch.no_grad()`, so every validation forward records a graph that is thrown away. --fixed:
validation under `torch.inference_mode()`.
"""

import contextlib
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class ResidualMLP(nn.Module):
    def __init__(self, dim=128, depth=4, classes=10):
        super().__init__()
        self.inp = nn.Linear(32, dim)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU()) for _ in range(depth)
        )
        self.out = nn.Linear(dim, classes)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = h + block(h)
        return self.out(h)


def validate(model, x_val, y_val):
    model.eval()
    guard = torch.inference_mode() if FIXED else contextlib.nullcontext()
    correct = 0
    with guard, torch.autocast("cpu", dtype=torch.bfloat16):
        for xb, yb in zip(x_val.split(512), y_val.split(512)):
            correct += (model(xb).argmax(1) == yb).sum().item()
    model.train()
    return correct / len(x_val)


if __name__ == "__main__":
    torch.manual_seed(0)
    w = torch.randn(32, 10)
    x = torch.randn(20000, 32)
    y = (x @ w).argmax(1)
    x_val, y_val = x[:4096], y[:4096]
    x_train, y_train = x[4096:], y[4096:]
    model = ResidualMLP()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    total = 2 * len(x_train) // 64
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, total)
    step = 0
    for epoch in range(2):
        for idx in torch.randperm(len(x_train)).split(64):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits = model(x_train[idx])
            loss = nn.functional.cross_entropy(logits.float(), y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % 50 == 0:
                acc = validate(model, x_val, y_val)
        print("epoch", epoch, "val acc", acc)
