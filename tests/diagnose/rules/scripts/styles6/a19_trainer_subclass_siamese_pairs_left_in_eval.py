"""A `Trainer` base class with overridable hooks (`training_step`, `on_epoch_start`,
`on_epoch_end`) and a `SiameseTrainer(Trainer)` learning an embedding from image pairs
(contrastive loss with a margin) on synthetic 24x24 digit-like glyphs; a BatchNorm convnet.

Planted: the subclass's `on_epoch_end` measures pair accuracy and calls `self.model.eval()`;
the base class puts the model in train mode only once, in `fit()` before the first epoch, so
every epoch after the first trains in eval mode. --fixed: `on_epoch_end` restores train mode.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Trainer:
    def __init__(self, model, epochs=4, lr=1e-3):
        self.model, self.epochs = model, epochs
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def training_step(self, batch):
        raise NotImplementedError

    def on_epoch_start(self, epoch):
        pass

    def on_epoch_end(self, epoch):
        pass

    def fit(self, batches):
        self.model.train()
        for epoch in range(self.epochs):
            self.on_epoch_start(epoch)
            for batch in batches():
                loss = self.training_step(batch)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self.on_epoch_end(epoch)


class SiameseTrainer(Trainer):
    def __init__(self, model, val_pairs, **kw):
        super().__init__(model, **kw)
        self.val_pairs = val_pairs

    def training_step(self, batch):
        a, b, same = batch
        d = (self.model(a) - self.model(b)).pow(2).sum(1).add(1e-8).sqrt()
        return (same * d.pow(2) + (1 - same) * (1.0 - d).clamp(min=0).pow(2)).mean()

    def on_epoch_end(self, epoch):
        self.model.eval()
        a, b, same = self.val_pairs
        with torch.no_grad():
            d = (self.model(a) - self.model(b)).pow(2).sum(1).sqrt()
        print(f"epoch {epoch} pair acc {float(((d < 0.5).float() == same).float().mean()):.3f}")
        if FIXED:
            self.model.train()


def glyphs(labels, gen):
    x = torch.randn(len(labels), 1, 24, 24, generator=gen) * 0.3
    for k in range(10):
        m = labels == k
        x[m, 0, 2 + 2 * k:4 + 2 * k, :] += 1.5
        x[m, 0, :, 20 - 2 * k:22 - 2 * k] += 1.5
    return x


def make_pairs(n, gen):
    la = torch.randint(0, 10, (n,), generator=gen)
    same = (torch.rand(n, generator=gen) < 0.5).float()
    lb = torch.where(same.bool(), la, (la + torch.randint(1, 10, (n,), generator=gen)) % 10)
    return glyphs(la, gen), glyphs(lb, gen), same


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    a, b, same = make_pairs(2048, gen)

    def batches():
        for idx in torch.randperm(len(a)).split(64):
            yield a[idx], b[idx], same[idx]

    model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 32))
    SiameseTrainer(model, make_pairs(256, gen)).fit(batches)


if __name__ == "__main__":
    main()
