"""A Keras-like `Model` base class with `fit(train, validation_data=..., validation_freq=...)`
and `evaluate(data)`; a subclass defines `call()` and `compute_loss()`. The task is
multi-label audio-event tagging from log-mel clips (a small 2-D CNN, 12 tags, BCE).

Planted: `fit` counts `validation_freq` in batches, not in epochs as Keras does, and the
script passes `validation_freq=1`: the whole validation set runs after every batch.
--fixed: validation_freq=1 counts epochs.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
TAGS = 12


class Model(nn.Module):
    def compile(self, lr=1e-3):
        self.optimizer = torch.optim.Adam(self.parameters(), lr=lr)

    def evaluate(self, data):
        self.eval()
        with torch.no_grad():
            losses = [float(self.compute_loss(self.call(x), y)) for x, y in data]
        self.train()
        return sum(losses) / len(losses)

    def fit(self, train, validation_data=None, epochs=1, validation_freq=1):
        seen = 0
        for epoch in range(epochs):
            self.train()
            for x, y in train():
                loss = self.compute_loss(self.call(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                seen += 1
                if not FIXED and validation_data and seen % validation_freq == 0:
                    self.val_loss = self.evaluate(validation_data)
            if FIXED and validation_data and (epoch + 1) % validation_freq == 0:
                self.val_loss = self.evaluate(validation_data)
            print(f"epoch {epoch}: loss {float(loss):.4f} val {self.val_loss:.4f}")


class Tagger(Model):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                 nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d((1, 8)), nn.Flatten(),
                                 nn.Linear(256, TAGS))

    def call(self, x):
        return self.net(x)

    def compute_loss(self, logits, y):
        return nn.functional.binary_cross_entropy_with_logits(logits, y)


def clips(n, gen):
    y = (torch.rand(n, TAGS, generator=gen) < 0.2).float()
    x = torch.randn(n, 1, 32, 48, generator=gen) * 0.5
    x[:, 0, :TAGS, :] += 2 * y[:, :, None]
    return x, y


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    xt, yt = clips(2048, gen)
    xv, yv = clips(512, gen)

    def train():
        for idx in torch.randperm(len(xt)).split(32):
            yield xt[idx], yt[idx]

    val = list(zip(xv.split(64), yv.split(64)))
    model = Tagger()
    model.compile()
    model.fit(train, validation_data=val, epochs=2, validation_freq=1)


if __name__ == "__main__":
    main()
