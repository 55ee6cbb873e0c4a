"""A language model trained on a text stream: a producer appends NumPy arrays of token ids to a
fixed-size ring buffer (an array of slots and a head index), and each step samples a batch of
slots from the ring.

Planted: the batch is built with `torch.tensor([ring[k] for k in picks])`: a list of NumPy
arrays through `torch.tensor`, element by element, every step. --fixed: the ring is one 2D
array and the batch is `torch.from_numpy(ring[picks])`.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv
SLOTS, CONTEXT, VOCAB = 512, 128, 500


class Ring:
    def __init__(self):
        self.slots = np.zeros((SLOTS, CONTEXT + 1), dtype=np.int64) if FIXED else [None] * SLOTS
        self.head, self.size = 0, 0

    def push(self, tokens):
        self.slots[self.head] = tokens
        self.head = (self.head + 1) % SLOTS
        self.size = min(self.size + 1, SLOTS)

    def sample(self, rng, n):
        picks = rng.integers(0, self.size, n)
        if FIXED:
            return torch.from_numpy(self.slots[picks])
        return torch.tensor([self.slots[k] for k in picks])


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    ring = Ring()
    # a bag-of-context next-token model: the ring's batches, not the model, are this script's
    model = nn.Sequential(
        nn.EmbeddingBag(VOCAB, 32), nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, VOCAB)
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(600):
        ring.push((np.arange(CONTEXT + 1) * (step % 7 + 1)) % VOCAB)
        batch = ring.sample(rng, 256)
        loss = nn.functional.cross_entropy(model(batch[:, :-1]), batch[:, -1])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, float(loss))
