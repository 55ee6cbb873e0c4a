"""Instance discrimination with a memory bank of negatives (a MoCo-like contrastive setup): a
query encoder, a momentum key encoder updated by EMA, and an InfoNCE loss of each query against
its key and against the bank of past keys.

Planted: the bank is a tensor grown with `torch.cat([bank, keys])` every step and never trimmed,
so each step's logits against the bank (and the bank's copy) cost more than the last.
--fixed: a fixed-size queue (the oldest keys dropped), as MoCo does.
"""

import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
QUEUE = 1024

if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(12000, 32)
    encoder = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 64))
    key_encoder = copy.deepcopy(encoder).requires_grad_(False)
    opt = torch.optim.SGD(encoder.parameters(), lr=0.03, momentum=0.9)
    bank = torch.nn.functional.normalize(torch.randn(256, 64), dim=1)
    for epoch in range(2):
        perm = torch.randperm(len(data))
        for step, start in enumerate(range(0, len(data), 64)):
            xb = data[perm[start : start + 64]]
            q = nn.functional.normalize(encoder(xb + 0.1 * torch.randn_like(xb)), dim=1)
            with torch.no_grad():
                k = nn.functional.normalize(key_encoder(xb + 0.1 * torch.randn_like(xb)), dim=1)
            logits = torch.cat([(q * k).sum(1, keepdim=True), q @ bank.T], 1) / 0.07
            loss = nn.functional.cross_entropy(logits, torch.zeros(len(q), dtype=torch.long))
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                for pk, pq in zip(key_encoder.parameters(), encoder.parameters()):
                    pk.mul_(0.99).add_(pq, alpha=0.01)
            bank = torch.cat([bank, k])
            if FIXED:
                bank = bank[-QUEUE:]
            if step % 100 == 0:
                print(epoch, step, loss.item(), len(bank))
