"""A PyTorch-Ignite-like engine written by the author: `Engine(process_fn)` with `Events`,
handlers attached with `@trainer.on(Events.ITERATION_COMPLETED)` and `EPOCH_COMPLETED`, a state
object carrying `iteration`, `epoch` and `output`. A 1-D conv classifier on synthetic signals.

Planted: the logging handler runs on every iteration and writes a formatted line through
`logging` to a file handler (and the console) for each batch. --fixed: the handler is attached
with an `every=200` filter, as Ignite's `Events.ITERATION_COMPLETED(every=200)` would.
"""

import logging
import os
import sys
import tempfile
from enum import Enum

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
log = logging.getLogger("trainer")


class Events(Enum):
    ITERATION_COMPLETED = "iteration_completed"
    EPOCH_COMPLETED = "epoch_completed"


class State:
    def __init__(self):
        self.iteration = self.epoch = 0
        self.output = None


class Engine:
    def __init__(self, process_fn):
        self.process_fn = process_fn
        self.state = State()
        self.handlers = {event: [] for event in Events}

    def on(self, event, every=1):
        def register(fn):
            self.handlers[event].append((fn, every))
            return fn

        return register

    def fire(self, event):
        count = self.state.iteration if event is Events.ITERATION_COMPLETED else self.state.epoch
        for fn, every in self.handlers[event]:
            if count % every == 0:
                fn(self)

    def run(self, data, max_epochs):
        for _ in range(max_epochs):
            self.state.epoch += 1
            for batch in data:
                self.state.iteration += 1
                self.state.output = self.process_fn(self, batch)
                self.fire(Events.ITERATION_COMPLETED)
            self.fire(Events.EPOCH_COMPLETED)
        return self.state


def batches(n=6000, size=32):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 2, 128, generator=g)
    y = (x[:, 0, :64].mean(1) > x[:, 1, 64:].mean(1)).long()
    return [(x[i : i + size], y[i : i + size]) for i in range(0, n, size)]


if __name__ == "__main__":
    torch.manual_seed(0)
    out_dir = tempfile.mkdtemp()
    handler = logging.FileHandler(os.path.join(out_dir, "train.log"))
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    model = nn.Sequential(
        nn.Conv1d(2, 16, 5, padding=2),
        nn.ReLU(),
        nn.MaxPool1d(4),
        nn.Conv1d(16, 32, 5, padding=2),
        nn.ReLU(),
        nn.AdaptiveAvgPool1d(1),
        nn.Flatten(),
        nn.Linear(32, 2),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def train_step(engine, batch):
        x, y = batch
        model.train()
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return {"loss": loss.detach(), "grad_norm": sum(p.grad.norm() for p in model.parameters())}

    trainer = Engine(train_step)

    @trainer.on(Events.ITERATION_COMPLETED, every=200 if FIXED else 1)
    def log_iteration(engine):
        out = engine.state.output
        log.info(
            "epoch %d iter %d loss %.5f grad_norm %.4f lr %s",
            engine.state.epoch,
            engine.state.iteration,
            out["loss"],
            out["grad_norm"],
            [group["lr"] for group in opt.param_groups],
        )

    @trainer.on(Events.EPOCH_COMPLETED)
    def log_epoch(engine):
        print("epoch", engine.state.epoch, "loss", float(engine.state.output["loss"]))

    trainer.run(batches(), max_epochs=3)
