"""A trainer made of mixins where gradient clearing is its own small mixin method
(`GradMixin.clear_grads`), used by the loop mixin before each backward. A wide embedding-bag
recommender (one large embedding table and an MLP), SGD.

Planted: `clear_grads` calls `self.model.zero_grad(set_to_none=False)` ("keep the buffers to
avoid reallocation"): every step fills every gradient with zeros, the 200k-row embedding
table's included, before backward writes it again. --fixed: `set_to_none=True`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class GradMixin:
    def clear_grads(self):
        self.model.zero_grad(set_to_none=FIXED)


class LoopMixin:
    def train_epoch(self, data):
        for ids, offsets, y in data:
            self.clear_grads()
            loss = nn.functional.binary_cross_entropy_with_logits(self.model(ids, offsets), y)
            loss.backward()
            self.opt.step()
        return float(loss)


class Recommender(nn.Module):
    def __init__(self, items=200_000, dim=32):
        super().__init__()
        self.bag = nn.EmbeddingBag(items, dim, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, ids, offsets):
        return self.mlp(self.bag(ids, offsets)).squeeze(1)


class Trainer(GradMixin, LoopMixin):
    def __init__(self):
        self.model = Recommender()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05)


if __name__ == "__main__":
    torch.manual_seed(0)
    data = []
    for _ in range(50):
        ids = torch.randint(0, 200_000, (64 * 10,))
        offsets = torch.arange(0, 64 * 10, 10)
        data.append((ids, offsets, (ids.view(64, 10)[:, 0] % 2).float()))
    trainer = Trainer()
    for epoch in range(4):
        print("epoch", epoch, trainer.train_epoch(data))
