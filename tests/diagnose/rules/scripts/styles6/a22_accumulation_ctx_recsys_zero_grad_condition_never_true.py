"""Gradient accumulation through a small `Accumulator` context manager (a DDP-style `no_sync`
stand-in that counts micro-batches and says when to step), for a factorization-machine
click model (sparse ids, embedding sums, pairwise interactions).

Planted: the optimizer steps when `acc.sync` is true, but the gradients are cleared under
`if acc.count % ACCUM == ACCUM:` which can never hold: gradients pile up across every
optimizer step. --fixed: cleared right after the step.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
ACCUM, FIELDS, VOCAB, K = 4, 10, 20000, 16


class Accumulator:
    def __init__(self, every):
        self.every, self.count, self.sync = every, 0, False

    def __enter__(self):
        self.count += 1
        self.sync = self.count % self.every == 0
        return self

    def __exit__(self, *exc):
        return False


class FM(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Embedding(VOCAB, 1)
        self.v = nn.Embedding(VOCAB, K)
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, ids):
        v = self.v(ids)
        pair = 0.5 * (v.sum(1).pow(2) - v.pow(2).sum(1)).sum(1)
        return self.bias + self.w(ids).sum((1, 2)) + pair


def main():
    torch.manual_seed(0)
    ids = torch.randint(0, VOCAB, (40000, FIELDS))
    y = ((ids[:, 0] + ids[:, 1]) % 3 == 0).float()
    model = FM()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    acc = Accumulator(ACCUM)
    for epoch in range(2):
        for idx in torch.randperm(len(ids)).split(256):
            with acc:
                logit = model(ids[idx])
                loss = nn.functional.binary_cross_entropy_with_logits(logit, y[idx]) / ACCUM
                loss.backward()
            if acc.sync:
                opt.step()
                if FIXED:
                    opt.zero_grad()
            if not FIXED and acc.count % ACCUM == ACCUM:
                opt.zero_grad()
        print(epoch, float(loss) * ACCUM)


if __name__ == "__main__":
    main()
