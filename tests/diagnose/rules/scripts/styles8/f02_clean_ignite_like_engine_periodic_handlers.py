"""Clean: an Ignite-like engine written by the author with event handlers: a loss logger every
100 iterations, a validation run and a checkpoint at each epoch's end. A GRU sequence
classifier."""

import os
import tempfile

import torch
from torch import nn


class Engine:
    def __init__(self, step_fn):
        self.step_fn, self.handlers = step_fn, []
        self.iteration = self.epoch = 0
        self.output = None

    def add_event_handler(self, when, fn, every=1):
        self.handlers.append((when, every, fn))

    def _fire(self, when, count):
        for event, every, fn in self.handlers:
            if event == when and count % every == 0:
                fn(self)

    def run(self, batches, max_epochs):
        for self.epoch in range(1, max_epochs + 1):
            for batch in batches:
                self.iteration += 1
                self.output = self.step_fn(batch)
                self._fire("iteration", self.iteration)
            self._fire("epoch", self.epoch)


class GRUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(6, 48, batch_first=True)
        self.fc = nn.Linear(48, 2)

    def forward(self, x):
        return self.fc(self.gru(x)[1][0])


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6000, 30, 6)
    y = (x[:, :, 0].sum(1) > 0).long()
    train = list(zip(x[:5000].split(64), y[:5000].split(64)))
    model = GRUNet()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    folder = tempfile.mkdtemp()

    def step(batch):
        model.train()
        xb, yb = batch
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()

    def validate(engine):
        model.eval()
        with torch.no_grad():
            acc = (model(x[5000:]).argmax(1) == y[5000:]).float().mean().item()
        torch.save(model.state_dict(), os.path.join(folder, f"epoch{engine.epoch}.pt"))
        print("epoch", engine.epoch, "val acc", acc)

    trainer = Engine(step)
    trainer.add_event_handler(
        "iteration", lambda e: print("iter", e.iteration, float(e.output)), every=100
    )
    trainer.add_event_handler("epoch", validate)
    trainer.run(train, max_epochs=2)
