"""Matrix-factorisation recommender (user and item embedding tables) trained by a Trainer class
that clears the gradients with zero_grad(set_to_none=False), copied from a pre-2.0 recipe.

Planted: zero_grad(set_to_none=False) writes zeros over both embedding tables' gradients every
step. --fixed: zero_grad() (set_to_none=True, the default).
"""

import sys

import torch
from torch import nn


class MatrixFactorization(nn.Module):
    def __init__(self, users=40_000, items=20_000, dim=64):
        super().__init__()
        self.user = nn.Embedding(users, dim)
        self.item = nn.Embedding(items, dim)
        self.user_bias = nn.Embedding(users, 1)
        self.item_bias = nn.Embedding(items, 1)

    def forward(self, u, i):
        dot = (self.user(u) * self.item(i)).sum(1)
        return dot + self.user_bias(u).squeeze(1) + self.item_bias(i).squeeze(1)


class Trainer:
    def __init__(self, model, set_to_none):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.5, foreach=True)
        self.set_to_none = set_to_none

    def step(self, u, i, r):
        self.opt.zero_grad(set_to_none=self.set_to_none)
        loss = nn.functional.mse_loss(self.model(u, i), r)
        loss.backward()
        self.opt.step()
        return loss.detach()

    def fit(self, ratings, epochs, batch=1024):
        u, i, r = ratings
        for epoch in range(epochs):
            total = torch.zeros(())
            for idx in torch.randperm(len(r)).split(batch):
                total += self.step(u[idx], i[idx], r[idx])
            print(f"epoch {epoch}: mse {total.item() / (len(r) // batch):.3f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    n = 60_000
    ratings = (torch.randint(0, 40_000, (n,)), torch.randint(0, 20_000, (n,)), torch.rand(n) * 5)
    Trainer(MatrixFactorization(), set_to_none="--fixed" in sys.argv).fit(ratings, epochs=2)
