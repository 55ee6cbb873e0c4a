"""Two problems in one argparse-driven script: `--precision` defaults to "64" (the author's
numerical check left as default) and selects torch.float64 for the model and the data, and
`--eval-every` defaults to 1, so the held-out set is scored after every step.

Planted: float64 compute (scored) and evaluation every step. --fixed: --precision 32
--eval-every 200.
"""

import argparse
import sys

import torch
from torch import nn


def parse(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--precision", choices=["32", "64"], default="64")
    p.add_argument("--eval-every", type=int, default=1)
    p.add_argument("--fixed", action="store_true")
    args = p.parse_args(argv)
    if args.fixed:
        args.precision, args.eval_every = "32", 200
    return args


def main(argv):
    args = parse(argv)
    dtype = {"32": torch.float32, "64": torch.float64}[args.precision]
    torch.manual_seed(0)
    x = torch.randn(12800, 96, dtype=dtype)
    y = (x[:, :8].sum(1) > 0).long()
    vx = torch.randn(1024, 96, dtype=dtype)
    vy = (vx[:, :8].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(96, 384), nn.Tanh(), nn.Linear(384, 384), nn.Tanh(),
                          nn.Linear(384, 2)).to(dtype)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step, (xb, yb) in enumerate(zip(x.split(64), y.split(64))):
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % args.eval_every == 0:
            model.eval()
            with torch.no_grad():
                acc = (model(vx).argmax(1) == vy).double().mean().item()
            model.train()
            if step % 50 == 0:
                print(f"step {step} loss {loss.item():.3f} val acc {acc:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
