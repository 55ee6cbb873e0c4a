"""A NaN guard: before every optimizer step the trainer keeps a full copy of the model's and the
optimizer's state (state_dict, cloned) so that it can roll back if the loss turns NaN.

Planted: the whole model (and optimizer state) copied every step. --fixed: a snapshot once per
epoch.
"""

import copy
import sys

import torch
from torch import nn


class GuardedTrainer:
    def __init__(self, model, every_step):
        self.model, self.every_step = model, every_step
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.snapshot = None

    def take_snapshot(self):
        self.snapshot = (copy.deepcopy(self.model.state_dict()),
                         copy.deepcopy(self.opt.state_dict()))

    def step(self, xb, yb):
        if self.every_step:
            self.take_snapshot()
        loss = nn.functional.cross_entropy(self.model(xb), yb)
        if torch.isnan(loss.detach()):
            self.model.load_state_dict(self.snapshot[0])
            self.opt.load_state_dict(self.snapshot[1])
            return loss
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss

    def fit(self, x, y, epochs):
        for epoch in range(epochs):
            if not self.every_step:
                self.take_snapshot()
            for xb, yb in zip(x.split(128), y.split(128)):
                loss = self.step(xb, yb)
            print(epoch, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                        nn.Linear(1024, 10))
    x, y = torch.randn(12800, 256), torch.randint(0, 10, (12800,))
    GuardedTrainer(net, every_step="--fixed" not in sys.argv).fit(x, y, epochs=3)
