"""Gradient accumulation with a warmup-linear LR schedule stepped per optimizer update: micro-
batches of 16, an update every `ACCUM` micro-batches, the schedule's length computed from the
number of updates. A small Transformer-style token classifier (embedding, one encoder layer).

Planted: `optimizer.zero_grad()` sits at the top of the epoch loop (once per epoch, "before the
accumulation starts") instead of after each update, so gradients are never cleared between
updates: each update applies the sum of every gradient since the epoch began.
--fixed: zero_grad after every update.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
ACCUM, VOCAB, SEQ, MICRO = 4, 300, 24, 16

if __name__ == "__main__":
    torch.manual_seed(0)
    tokens = torch.randint(0, VOCAB, (3072, SEQ))
    labels = (tokens[:, 0] % 2).long()
    model = nn.Sequential(nn.Embedding(VOCAB, 64),
                          nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True),
                          nn.Flatten(), nn.Linear(64 * SEQ, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4)
    epochs = 3
    updates = epochs * len(tokens) // (MICRO * ACCUM)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda u: min((u + 1) / 10, max(0.0, (updates - u) / (updates - 10)))
    )
    for epoch in range(epochs):
        opt.zero_grad()
        perm = torch.randperm(len(tokens))
        for i, start in enumerate(range(0, len(tokens), MICRO)):
            idx = perm[start : start + MICRO]
            loss = nn.functional.cross_entropy(model(tokens[idx]), labels[idx]) / ACCUM
            loss.backward()
            if (i + 1) % ACCUM == 0:
                opt.step()
                sched.step()
                if FIXED:
                    opt.zero_grad()
        print("epoch", epoch, loss.item() * ACCUM)
