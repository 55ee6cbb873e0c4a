"""A trainer whose behaviour is assembled from hooks registered by decorators
(`@trainer.on("after_backward")`, `@trainer.on("step_end")`), as in a small in-house framework.
A two-tower recommender: user and item towers (embeddings + MLP), in-batch negatives with a
softmax over the batch's item embeddings.

Planted: the "clear gradients" hook is registered on "after_backward" (the author meant
"before_forward"): every optimizer step runs on gradients just set to None, so nothing
learns. --fixed: registered on "before_forward".
"""

import sys
from collections import defaultdict

import torch
from torch import nn

CLEAR_EVENT = "before_forward" if "--fixed" in sys.argv else "after_backward"
USERS, ITEMS, DIM = 2000, 3000, 32


class HookTrainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.hooks = defaultdict(list)
        self.state = {"step": 0}

    def on(self, event):
        def register(fn):
            self.hooks[event].append(fn)
            return fn

        return register

    def fire(self, event):
        for fn in self.hooks[event]:
            fn(self)

    def run(self, batches, epochs):
        for _ in range(epochs):
            for users, items in batches():
                self.fire("before_forward")
                loss = self.model(users, items)
                loss.backward()
                self.fire("after_backward")
                self.optimizer.step()
                self.state["step"] += 1
                self.state["loss"] = loss.detach()
                self.fire("step_end")


class Tower(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.emb = nn.Embedding(n, DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 64), nn.ReLU(), nn.Linear(64, DIM))

    def forward(self, ids):
        return nn.functional.normalize(self.mlp(self.emb(ids)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.user, self.item = Tower(USERS), Tower(ITEMS)

    def forward(self, users, items):
        logits = self.user(users) @ self.item(items).T / 0.1
        return nn.functional.cross_entropy(logits, torch.arange(len(users)))


def main():
    torch.manual_seed(0)
    users = torch.randint(0, USERS, (20000,))
    items = (users * 7 + torch.randint(0, 5, (20000,))) % ITEMS

    def batches():
        for idx in torch.randperm(len(users)).split(1024):
            yield users[idx], items[idx]

    model = TwoTower()
    trainer = HookTrainer(model, torch.optim.Adam(model.parameters(), lr=1e-3))

    @trainer.on(CLEAR_EVENT)
    def clear_grads(t):
        t.optimizer.zero_grad()

    @trainer.on("step_end")
    def report(t):
        if t.state["step"] % 50 == 0:
            print(f"step {t.state['step']} loss {float(t.state['loss']):.4f}")

    trainer.run(batches, epochs=3)


if __name__ == "__main__":
    main()
