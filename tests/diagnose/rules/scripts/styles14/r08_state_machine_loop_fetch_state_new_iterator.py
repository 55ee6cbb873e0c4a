"""The training loop is a state machine (`while state != "done"`): states "fetch", "train",
"evaluate", "done", with the transitions in a dict. The loader has worker processes because the
dataset augments images.

Planted: the "fetch" state takes its batch with `next(iter(loader))`: a new iterator, and with
it two new worker processes, for every batch.
--fixed: the iterator is made once per epoch and kept in the machine's context (a new one when
it is exhausted), and the workers are persistent.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Jittered(Dataset):
    def __init__(self, n=4000):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 1, 28, 28, generator=g)
        self.y = (self.x.mean((1, 2, 3)) > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        img = self.x[i] + 0.05 * torch.randn(1, 28, 28)
        return torch.roll(img, int(torch.randint(-2, 3, ())), dims=2), self.y[i]


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(
        Jittered(), batch_size=64, shuffle=True, num_workers=2, persistent_workers=FIXED
    )
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 13 * 13, 2)
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    ctx = {"step": 0, "epoch": 0, "batch": None, "it": None}
    steps_per_epoch, epochs = 60, 3

    def fetch():
        if FIXED:
            if ctx["it"] is None:
                ctx["it"] = iter(loader)
            try:
                ctx["batch"] = next(ctx["it"])
            except StopIteration:
                ctx["it"] = iter(loader)
                ctx["batch"] = next(ctx["it"])
        else:
            ctx["batch"] = next(iter(loader))
        return "train"

    def train():
        x, y = ctx["batch"]
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        ctx["step"] += 1
        ctx["loss"] = loss
        return "evaluate" if ctx["step"] % steps_per_epoch == 0 else "fetch"

    def evaluate():
        print("epoch", ctx["epoch"], float(ctx["loss"]))
        ctx["epoch"] += 1
        return "done" if ctx["epoch"] == epochs else "fetch"

    machine = {"fetch": fetch, "train": train, "evaluate": evaluate}
    state = "fetch"
    while state != "done":
        state = machine[state]()
