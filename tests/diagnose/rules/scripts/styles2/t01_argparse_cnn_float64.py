"""argparse CLI for a small CNN classifier; the --dtype flag defaults to float64.

Planted: model and inputs in float64 (`--dtype float64` is the default). --fixed: float32.
"""

import argparse

import torch
import torch.nn.functional as F
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self, channels=32, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels * 2, 3, padding=1)
        self.head = nn.Linear(channels * 2 * 8 * 8, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.head(x.flatten(1))


def parse_args():
    p = argparse.ArgumentParser(description="train a small CNN on synthetic 32x32 images")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    p.add_argument("--fixed", action="store_true", help="use float32")
    return p.parse_args()


def main():
    args = parse_args()
    dtype = torch.float32 if args.fixed else getattr(torch, args.dtype)
    torch.manual_seed(1)
    images = torch.randn(1536, 3, 32, 32)
    labels = torch.randint(0, 10, (1536,))
    model = SmallCNN().to(dtype)
    optim = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, foreach=True)
    for epoch in range(args.epochs):
        order = torch.randperm(len(images))
        total = torch.zeros(())
        for start in range(0, len(images), args.batch_size):
            idx = order[start:start + args.batch_size]
            x, y = images[idx].to(dtype), labels[idx]
            optim.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optim.step()
            total += loss.detach().float()
        print(f"epoch {epoch} mean loss {total.item() / (len(images) // args.batch_size):.4f}")


if __name__ == "__main__":
    main()
