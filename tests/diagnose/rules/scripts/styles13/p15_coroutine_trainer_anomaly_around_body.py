"""A training loop written as a coroutine: `trainer = train_coroutine(model, opt); next(trainer)`
primes it, then the data loop `send`s each batch in and receives the loss back. A GRU tagger
on generated sequences.

Planted: the coroutine body runs inside `with torch.autograd.detect_anomaly():` (put there to
chase a NaN once): every backward records the forward's traceback per node and checks every
gradient for NaN, for the whole run. --fixed: the body without the context.
"""

import contextlib
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def train_coroutine(model, opt):
    guard = contextlib.nullcontext() if FIXED else torch.autograd.detect_anomaly()
    with guard:
        loss = None
        while True:
            batch = yield loss
            x, y = batch
            out, _ = model["rnn"](x)
            loss = nn.functional.cross_entropy(model["head"](out).flatten(0, 1), y.flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss = loss.detach()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.ModuleDict({"rnn": nn.GRU(16, 64, batch_first=True), "head": nn.Linear(64, 5)})
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(2048, 20, 16)
    y = x[..., :5].argmax(-1)
    trainer = train_coroutine(model, opt)
    next(trainer)
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(64):
            loss = trainer.send((x[idx], y[idx]))
        print("epoch", epoch, float(loss))
