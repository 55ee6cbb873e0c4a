"""Adaptive gradient clipping in the "AutoClip" manner: the clipping threshold is a percentile
of the gradient norms seen so far. A small transformer-free text classifier (EmbeddingBag).

Planted: the norms are kept as tensors and the percentile is recomputed every step with
`torch.quantile(torch.stack(history), 0.9)` over the whole history: each step stacks and sorts
every norm so far, so steps get slower as the run goes on.
--fixed: a fixed-size window of the last 200 norms (`deque(maxlen=200)`).
"""

import sys
from collections import deque

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class AutoClip:
    def __init__(self, params, percentile=0.9):
        self.params = list(params)
        self.percentile = percentile
        self.history = deque(maxlen=200) if FIXED else []

    def __call__(self):
        norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in self.params]))
        self.history.append(norm)
        threshold = torch.quantile(torch.stack(list(self.history)), self.percentile)
        torch.nn.utils.clip_grad_norm_(self.params, threshold)


if __name__ == "__main__":
    torch.manual_seed(0)
    tokens = torch.randint(0, 5000, (60000, 16))
    labels = (tokens[:, 0] % 2).long()
    model = nn.Sequential(nn.EmbeddingBag(5000, 64), nn.Linear(64, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    clip = AutoClip(model.parameters())
    for epoch in range(2):
        for idx in torch.randperm(len(tokens)).split(32):
            loss = nn.functional.cross_entropy(model(tokens[idx]), labels[idx])
            opt.zero_grad()
            loss.backward()
            clip()
            opt.step()
        print("epoch", epoch, float(loss))
