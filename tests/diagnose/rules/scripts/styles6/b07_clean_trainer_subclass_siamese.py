"""CLEAN: a Trainer base class whose subclass overrides `training_step` and `validate`; the
override switches to eval mode under no_grad and back to train mode; a siamese BatchNorm
convnet on image pairs with a contrastive margin loss. Nothing is planted (`--fixed` changes
nothing).
"""

import torch
from torch import nn


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)

    def fit(self, batches, val, epochs):
        for epoch in range(epochs):
            self.model.train()
            for batch in batches():
                loss = self.training_step(batch)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            print(epoch, self.validate(val))


class Siamese(Trainer):
    def distance(self, a, b):
        return (self.model(a) - self.model(b)).pow(2).sum(1).add(1e-8).sqrt()

    def training_step(self, batch):
        a, b, same = batch
        d = self.distance(a, b)
        return (same * d ** 2 + (1 - same) * (1 - d).clamp(min=0) ** 2).mean()

    def validate(self, val):
        self.model.eval()
        with torch.no_grad():
            a, b, same = val
            acc = float(((self.distance(a, b) < 0.5).float() == same).float().mean())
        self.model.train()
        return acc


def pairs(n, gen):
    la = torch.randint(0, 8, (n,), generator=gen)
    same = (torch.rand(n, generator=gen) < 0.5).float()
    lb = torch.where(same.bool(), la, (la + 1) % 8)

    def img(lab):
        x = torch.randn(n, 1, 20, 20, generator=gen) * 0.3
        x[torch.arange(n), 0, 2 * lab, :] += 2
        return x

    return img(la), img(lb), same


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    a, b, same = pairs(2048, gen)

    def batches():
        for idx in torch.randperm(len(a)).split(64):
            yield a[idx], b[idx], same[idx]

    model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 32))
    Siamese(model).fit(batches, pairs(256, gen), epochs=3)


if __name__ == "__main__":
    main()
