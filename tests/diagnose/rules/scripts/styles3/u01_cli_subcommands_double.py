"""A CLI with subcommands (`train`, `evaluate`, `export`) built with argparse sub-parsers; the
`train` subcommand is the default and takes `--precision {single,double}` whose default was left
at "double" after a numerical-stability experiment.

Planted: the model and its inputs run in float64. --fixed: float32.
"""

import argparse
import sys

import torch
from torch import nn


def build_parser():
    parser = argparse.ArgumentParser(prog="tabular")
    sub = parser.add_subparsers(dest="command")
    train = sub.add_parser("train")
    train.add_argument("--precision", choices=["single", "double"], default="double")
    train.add_argument("--epochs", type=int, default=4)
    train.add_argument("--fixed", action="store_true")
    sub.add_parser("evaluate")
    sub.add_parser("export")
    return parser


def cmd_train(opts):
    dtype = torch.float64 if opts.precision == "double" and not opts.fixed else torch.float32
    torch.manual_seed(0)
    x = torch.randn(8192, 64, dtype=dtype)
    y = (x[:, :8].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(64, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(),
                          nn.Linear(512, 2)).to(dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(opts.epochs):
        perm = torch.randperm(len(x))
        for i in range(0, len(x), 128):
            idx = perm[i:i + 128]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")


COMMANDS = {"train": cmd_train, "evaluate": lambda o: print("nothing to evaluate"),
            "export": lambda o: print("nothing to export")}

if __name__ == "__main__":
    argv = sys.argv[1:]
    if not argv or argv[0].startswith("-"):
        argv = ["train", *argv]
    opts = build_parser().parse_args(argv)
    COMMANDS[opts.command](opts)
