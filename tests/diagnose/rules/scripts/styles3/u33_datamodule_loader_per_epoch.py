"""A Lightning-like DataModule (`setup()`, `train_dataloader()`) and a hand-written loop that asks
the data module for its train loader at the start of every epoch, as the framework would; the
loader has one worker process and no persistent_workers, so each epoch starts a new worker.

Planted: DataLoader workers re-spawned every epoch. --fixed: persistent_workers=True and the
loader cached by the data module.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Jitter(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] + 0.01 * torch.randn_like(self.x[i]), self.y[i]


class DataModule:
    def __init__(self, fixed):
        self.fixed, self.cached = fixed, None

    def setup(self):
        torch.manual_seed(0)
        self.train = Jitter(torch.randn(1536, 64), torch.randint(0, 4, (1536,)))

    def train_dataloader(self):
        if self.fixed and self.cached is not None:
            return self.cached
        loader = DataLoader(self.train, batch_size=128, shuffle=True, num_workers=1,
                            persistent_workers=self.fixed)
        self.cached = loader
        return loader


def main():
    dm = DataModule(fixed="--fixed" in sys.argv)
    dm.setup()
    model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(12):
        for xb, yb in dm.train_dataloader():
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
