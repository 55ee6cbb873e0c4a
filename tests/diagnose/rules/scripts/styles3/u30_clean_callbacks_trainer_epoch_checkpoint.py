"""CLEAN: a Trainer with a list of callback objects (a progress meter that keeps tensors and
reads them every 50 steps, a checkpointer that saves once per epoch to memory, a learning-rate
scheduler step per epoch), gradient accumulation over 2 micro-batches with zero_grad after each
optimizer step. Nothing is planted (`--fixed` changes nothing).
"""

import io

import torch
from torch import nn


class Meter:
    def __init__(self):
        self.values = []

    def on_step(self, trainer, loss):
        self.values.append(loss.detach())
        if len(self.values) == 50:
            print(f"step {trainer.step}: {torch.stack(self.values).mean().item():.4f}")
            self.values = []

    def on_epoch(self, trainer):
        pass


class Checkpointer:
    def on_step(self, trainer, loss):
        pass

    def on_epoch(self, trainer):
        buffer = io.BytesIO()
        torch.save(trainer.model.state_dict(), buffer)
        trainer.saved = buffer.getbuffer().nbytes


class Trainer:
    def __init__(self, model, callbacks, accum=2):
        self.model, self.callbacks, self.accum, self.step = model, callbacks, accum, 0
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, 1, gamma=0.9)

    def fit(self, x, y, epochs):
        for _ in range(epochs):
            for i, (xb, yb) in enumerate(zip(x.split(64), y.split(64))):
                loss = nn.functional.cross_entropy(self.model(xb), yb) / self.accum
                loss.backward()
                if i % self.accum == self.accum - 1:
                    self.opt.step()
                    self.opt.zero_grad(set_to_none=True)
                    self.step += 1
                for cb in self.callbacks:
                    cb.on_step(self, loss)
            self.sched.step()
            for cb in self.callbacks:
                cb.on_epoch(self)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(40, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 6))
    x, y = torch.randn(12800, 40), torch.randint(0, 6, (12800,))
    Trainer(model, [Meter(), Checkpointer()]).fit(x, y, epochs=3)
