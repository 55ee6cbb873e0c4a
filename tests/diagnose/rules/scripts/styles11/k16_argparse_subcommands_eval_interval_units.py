"""A command-line tool with subcommands (`prog train ...`, `prog evaluate ...`, `prog export
...`) built with argparse sub-parsers and `set_defaults(func=...)`. `train` fits a small CNN on
generated images and validates every `--eval-interval`.

Planted: `--eval-interval` is documented as "in epochs" with default 1, but the train function
compares it with the global step: validation over the whole 2000-image validation set runs after
every training step. --fixed: the interval is converted to steps (epochs x steps per epoch).
"""

import argparse
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def build_model():
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(32, 5))


@torch.no_grad()
def validate(model, x, y):
    model.eval()
    acc = sum(float((model(xb).argmax(-1) == yb).sum()) for xb, yb in zip(x.split(500),
                                                                            y.split(500)))
    model.train()
    return acc / len(x)


def cmd_train(args):
    torch.manual_seed(args.seed)
    x = torch.randn(6000, 3, 24, 24)
    y = (x[:, 0].mean((1, 2)) * 8).long().clamp(-2, 2) + 2
    train_x, train_y, val_x, val_y = x[:4000], y[:4000], x[4000:], y[4000:]
    model = build_model()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    steps_per_epoch = len(train_x) // args.batch_size
    interval = args.eval_interval * steps_per_epoch if FIXED else args.eval_interval
    step = 0
    for epoch in range(args.epochs):
        perm = torch.randperm(len(train_x))
        for idx in perm.split(args.batch_size):
            loss = nn.functional.cross_entropy(model(train_x[idx]), train_y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % interval == 0:
                print("step", step, "val acc", validate(model, val_x, val_y))


def cmd_evaluate(args):
    print("evaluate", args.checkpoint)


def main(argv):
    parser = argparse.ArgumentParser(prog="kws")
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train")
    train.add_argument("--epochs", type=int, default=3)
    train.add_argument("--batch-size", type=int, default=64)
    train.add_argument("--lr", type=float, default=0.05)
    train.add_argument("--eval-interval", type=int, default=1, help="validate every N epochs")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--fixed", action="store_true")
    train.set_defaults(func=cmd_train)
    evaluate = sub.add_parser("evaluate")
    evaluate.add_argument("checkpoint")
    evaluate.set_defaults(func=cmd_evaluate)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    argv = sys.argv[1:]
    if not argv or argv[0].startswith("-"):
        argv = ["train", *argv]
    main(argv)
