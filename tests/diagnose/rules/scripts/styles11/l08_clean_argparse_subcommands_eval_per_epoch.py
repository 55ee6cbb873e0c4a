"""A clean program: an argparse tool with `train` / `evaluate` subcommands; `train` fits a small
CNN on generated images for 4 epochs and validates once per epoch in eval mode under
`torch.inference_mode()`, keeping the best weights with an in-place copy into a preallocated
state. --fixed: same program.
"""

import argparse
import sys

import torch
from torch import nn


def build_model():
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(32, 5))


@torch.inference_mode()
def validate(model, x, y):
    model.eval()
    correct = sum(int((model(xb).argmax(-1) == yb).sum()) for xb, yb in zip(x.split(500),
                                                                              y.split(500)))
    model.train()
    return correct / len(x)


def cmd_train(args):
    torch.manual_seed(args.seed)
    x = torch.randn(6000, 3, 24, 24)
    y = (x[:, 0].mean((1, 2)) * 8).long().clamp(-2, 2) + 2
    model = build_model()
    best = {k: v.clone() for k, v in model.state_dict().items()}
    best_acc = -1.0
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        for idx in torch.randperm(4000).split(args.batch_size):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        acc = validate(model, x[4000:], y[4000:])
        if acc > best_acc:
            best_acc = acc
            for k, v in model.state_dict().items():
                best[k].copy_(v)
        print("epoch", epoch, float(loss), acc)


def main(argv):
    parser = argparse.ArgumentParser(prog="kws")
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train")
    train.add_argument("--epochs", type=int, default=4)
    train.add_argument("--batch-size", type=int, default=64)
    train.add_argument("--lr", type=float, default=0.05)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--fixed", action="store_true")
    train.set_defaults(func=cmd_train)
    sub.add_parser("evaluate").set_defaults(func=lambda a: print("evaluate"))
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    argv = sys.argv[1:]
    if not argv or argv[0].startswith("-"):
        argv = ["train", *argv]
    main(argv)
