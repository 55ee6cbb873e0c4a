"""CLEAN: a Hugging Face-style model returning a dataclass output with the loss, a Trainer-like
class with callbacks (logging every 100 steps with a detached loss, evaluation under
inference_mode in eval mode once per epoch, a checkpoint at the end). Nothing is planted
(`--fixed` changes nothing).
"""

import os
import tempfile
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class ModelOutput:
    loss: torch.Tensor
    logits: torch.Tensor


class TinyClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Dropout(0.1),
                                  nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 4))

    def forward(self, features, labels):
        logits = self.body(features)
        return ModelOutput(nn.functional.cross_entropy(logits, labels), logits)


class LogCallback:
    def on_step_end(self, trainer, step, loss):
        if step % 100 == 0:
            print(f"step {step} loss {loss:.4f}")

    def on_epoch_end(self, trainer, epoch):
        pass


class EvalCallback:
    def __init__(self, batches):
        self.batches = batches

    def on_step_end(self, trainer, step, loss):
        pass

    def on_epoch_end(self, trainer, epoch):
        trainer.model.eval()
        with torch.inference_mode():
            losses = [trainer.model(**b).loss for b in self.batches]
        trainer.model.train()
        print(f"epoch {epoch} eval loss {torch.stack(losses).mean().item():.4f}")


class Trainer:
    def __init__(self, model, batches, callbacks):
        self.model, self.batches, self.callbacks = model, batches, callbacks
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.global_step = 0

    def train(self, epochs):
        self.model.train()
        for epoch in range(epochs):
            for batch in self.batches:
                loss = self.model(**batch).loss
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                for cb in self.callbacks:
                    cb.on_step_end(self, self.global_step, loss.detach())
                self.global_step += 1
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)
        torch.save(self.model.state_dict(), os.path.join(tempfile.mkdtemp(), "final.pt"))


def batches(n, size):
    x, y = torch.randn(n, 64), torch.randint(0, 4, (n,))
    return [{"features": a, "labels": b} for a, b in zip(x.split(size), y.split(size))]


if __name__ == "__main__":
    torch.manual_seed(0)
    Trainer(TinyClassifier(), batches(12800, 64), [LogCallback(), EvalCallback(batches(1024, 256))]
            ).train(epochs=3)
