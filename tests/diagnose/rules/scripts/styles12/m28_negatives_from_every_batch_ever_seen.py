"""A metric-learning model (triplet-free contrastive loss) that mines negatives from a bank of
embeddings of previously seen batches, detached, compared against each new batch.

Planted: the bank is a Python list that gets every batch's embeddings appended and is
concatenated whole every step (`torch.cat(bank)`): the similarity matrix, and the step time,
grow linearly with the number of steps taken. --fixed: the bank keeps the last 16 batches
(a bounded `collections.deque`).
"""

import collections
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(40000, 64)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    bank = collections.deque(maxlen=16) if FIXED else []
    for step, idx in enumerate(torch.randperm(len(data)).split(128)):
        x = data[idx]
        a = nn.functional.normalize(model(x), dim=1)
        p = nn.functional.normalize(model(x + 0.05 * torch.randn_like(x)), dim=1)
        negatives = torch.cat(list(bank)) if bank else torch.zeros(0, 64)
        logits = torch.cat([(a * p).sum(1, keepdim=True), a @ negatives.t()], 1) / 0.1
        loss = nn.functional.cross_entropy(logits, torch.zeros(len(x), dtype=torch.long))
        opt.zero_grad()
        loss.backward()
        opt.step()
        bank.append(p.detach())
        if step % 50 == 0:
            print("step", step, float(loss), len(bank))
