"""Hand-written additive attention over a sequence: the author loops over time steps in Python
and computes one score at a time.

Planted: a Python loop over positions with small ops per position. --fixed: the same attention
computed with batched tensor ops.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class AdditiveAttentionPool(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.key = nn.Linear(dim, dim)
        self.score = nn.Linear(dim, 1)
        self.head = nn.Linear(dim, 2)

    def forward(self, seq):
        if FIXED:
            weights = torch.softmax(self.score(torch.tanh(self.key(seq))), dim=1)
            return self.head((weights * seq).sum(1))
        scores = []
        for t in range(seq.size(1)):
            scores.append(self.score(torch.tanh(self.key(seq[:, t]))))
        weights = torch.softmax(torch.cat(scores, 1), dim=1)
        pooled = torch.zeros_like(seq[:, 0])
        for t in range(seq.size(1)):
            pooled = pooled + weights[:, t:t + 1] * seq[:, t]
        return self.head(pooled)


def main():
    torch.manual_seed(0)
    seqs = torch.randn(2048, 40, 32)
    labels = (seqs[:, :, 0].mean(1) > 0).long()
    model = AdditiveAttentionPool()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    for epoch in range(2):
        for xb, yb in zip(seqs.split(64), labels.split(64)):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: {loss.item():.3f}")


if __name__ == "__main__":
    main()
