"""Semi-supervised mean teacher through a framework-style `Trainer` whose subclass overrides
`training_step(batch)` and `on_after_optimizer_step()`; labelled and unlabelled batches come
zipped; the teacher's predictions on a second augmentation give a consistency loss.

Planted: `on_after_optimizer_step` refreshes the teacher with `copy.deepcopy(self.model)`
after every step ("EMA is overkill for a baseline"), a copy of the whole model per step on a
2.4M-parameter MLP. --fixed: an EMA update in place, made once.
"""

import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def training_step(self, batch):
        raise NotImplementedError

    def on_after_optimizer_step(self):
        pass

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            self.model.train()
            for batch in loader():
                loss = self.training_step(batch)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.on_after_optimizer_step()
            print(epoch, float(loss))


class MeanTeacher(Trainer):
    def __init__(self, model, **kw):
        super().__init__(model, **kw)
        self.teacher = copy.deepcopy(model).requires_grad_(False)

    def training_step(self, batch):
        (xl, yl), xu = batch
        sup = nn.functional.cross_entropy(self.model(xl), yl)
        with torch.no_grad():
            target = self.teacher(xu + 0.1 * torch.randn_like(xu)).softmax(-1)
        cons = nn.functional.mse_loss(self.model(xu).softmax(-1), target)
        return sup + 5.0 * cons

    def on_after_optimizer_step(self):
        if FIXED:
            with torch.no_grad():
                for t, s in zip(self.teacher.parameters(), self.model.parameters()):
                    t.lerp_(s, 0.01)
        else:
            self.teacher = copy.deepcopy(self.model).requires_grad_(False)


def main():
    torch.manual_seed(0)
    x = torch.randn(6000, 128)
    y = (x[:, :10].sum(1) > 0).long() + (x[:, 10:20].sum(1) > 0).long()
    labelled = torch.arange(600)

    def loader():
        for idx in torch.randperm(6000).split(128):
            li = labelled[torch.randint(0, 600, (32,))]
            yield (x[li], y[li]), x[idx]

    model = nn.Sequential(nn.Linear(128, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 3))
    MeanTeacher(model, lr=0.01).fit(loader, epochs=2)


if __name__ == "__main__":
    main()
