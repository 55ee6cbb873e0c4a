"""CLEAN: a trainer assembled from hooks registered by decorators, a two-tower retrieval model
(small tables, in-batch negatives), a checkpoint hook on epoch end only, a logging hook
reading the loss every 100 steps. Nothing is planted (`--fixed` changes nothing).
"""

import os
import tempfile
from collections import defaultdict

import torch
from torch import nn

HOOKS = defaultdict(list)


def on(event):
    def add(fn):
        HOOKS[event].append(fn)
        return fn

    return add


def fire(event, state):
    for fn in HOOKS[event]:
        fn(state)


@on("step_end")
def log_loss(state):
    if state["step"] % 100 == 0:
        print(state["step"], state["loss"].item())


@on("epoch_end")
def save(state):
    torch.save(state["model"].state_dict(), os.path.join(state["dir"], "epoch.pt"))


class Tower(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.emb = nn.Embedding(n, 32)
        self.mlp = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 32))

    def forward(self, ids):
        return nn.functional.normalize(self.mlp(self.emb(ids)), dim=-1)


def main():
    torch.manual_seed(0)
    users = torch.randint(0, 500, (30000,))
    items = (users * 3 + torch.randint(0, 4, (30000,))) % 800
    user_tower, item_tower = Tower(500), Tower(800)
    model = nn.ModuleDict({"user": user_tower, "item": item_tower})
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    state = {"model": model, "step": 0, "dir": tempfile.mkdtemp()}
    for epoch in range(3):
        for idx in torch.randperm(len(users)).split(512):
            logits = user_tower(users[idx]) @ item_tower(items[idx]).T / 0.1
            loss = nn.functional.cross_entropy(logits, torch.arange(len(idx)))
            opt.zero_grad()
            loss.backward()
            opt.step()
            state.update(step=state["step"] + 1, loss=loss.detach())
            fire("step_end", state)
        fire("epoch_end", state)


if __name__ == "__main__":
    main()
