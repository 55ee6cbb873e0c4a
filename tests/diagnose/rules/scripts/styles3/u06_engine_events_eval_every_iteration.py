"""An Ignite-like Engine written in plain torch: a process function, events, and handlers
attached with a decorator. The evaluator handler was attached to ITERATION_COMPLETED instead of
EPOCH_COMPLETED, so the whole validation set is evaluated after every training iteration.

Planted: evaluation after every step. --fixed: after every epoch.
"""

import sys

import torch
from torch import nn


class Events:
    ITERATION_COMPLETED = "iteration_completed"
    EPOCH_COMPLETED = "epoch_completed"


class Engine:
    def __init__(self, process):
        self.process, self.handlers = process, {}
        self.state = type("State", (), {"iteration": 0, "epoch": 0, "output": None})()

    def on(self, event):
        def attach(fn):
            self.handlers.setdefault(event, []).append(fn)
            return fn
        return attach

    def _fire(self, event):
        for fn in self.handlers.get(event, []):
            fn(self)

    def run(self, data, max_epochs):
        for epoch in range(max_epochs):
            self.state.epoch = epoch
            for batch in data:
                self.state.iteration += 1
                self.state.output = self.process(self, batch)
                self._fire(Events.ITERATION_COMPLETED)
            self._fire(Events.EPOCH_COMPLETED)


def main(fixed):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 256),
                          nn.ReLU(), nn.Linear(256, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = torch.randn(9600, 32), torch.randint(0, 3, (9600,))
    vx, vy = torch.randn(1024, 32), torch.randint(0, 3, (1024,))
    train_batches = list(zip(x.split(64), y.split(64)))

    def train_step(engine, batch):
        model.train()
        xb, yb = batch
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()

    trainer = Engine(train_step)
    event = Events.EPOCH_COMPLETED if fixed else Events.ITERATION_COMPLETED

    @trainer.on(event)
    def run_validation(engine):
        model.eval()
        with torch.inference_mode():
            correct = sum((model(xb).argmax(1) == yb).sum() for xb, yb in
                          zip(vx.split(128), vy.split(128)))
        engine.state.metrics = {"acc": correct / len(vx)}

    @trainer.on(Events.EPOCH_COMPLETED)
    def log(engine):
        print(f"epoch {engine.state.epoch} acc {float(engine.state.metrics['acc']):.3f}")

    trainer.run(train_batches, max_epochs=3)


if __name__ == "__main__":
    main(fixed="--fixed" in sys.argv)
