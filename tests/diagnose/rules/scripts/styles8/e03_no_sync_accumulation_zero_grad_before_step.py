"""Gradient accumulation written as for DistributedDataParallel: the author's wrapper has a
`no_sync()` context (a no-op on one process, as DDP's is for the gradient all-reduce) entered on
every micro-batch but the last of each accumulation window; the window's last micro-batch steps
the optimizer. A small Transformer encoder classifying token sequences.

Planted: at the end of a window the author "clears, then applies" the accumulated gradients:
`optimizer.zero_grad()` runs before `optimizer.step()`, so every step finds no gradient and the
model never learns. --fixed: step, then zero_grad.
"""

import contextlib
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
ACCUM, VOCAB, SEQ = 4, 500, 32


class SingleProcessDDP(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module
        self.require_sync = True

    @contextlib.contextmanager
    def no_sync(self):
        self.require_sync = False
        try:
            yield
        finally:
            self.require_sync = True

    def forward(self, *args):
        return self.module(*args)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 64)
        layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(64, 3)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(1))


if __name__ == "__main__":
    torch.manual_seed(0)
    tokens = torch.randint(0, VOCAB, (2048, SEQ))
    labels = (tokens[:, :4].sum(1) % 3).long()
    model = SingleProcessDDP(Classifier())
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    micro = 16
    for epoch in range(2):
        model.train()
        for i, start in enumerate(range(0, len(tokens), micro)):
            xb, yb = tokens[start : start + micro], labels[start : start + micro]
            last = (i + 1) % ACCUM == 0
            context = contextlib.nullcontext() if last else model.no_sync()
            with context:
                loss = nn.functional.cross_entropy(model(xb), yb) / ACCUM
                loss.backward()
            if last:
                if FIXED:
                    optimizer.step()
                    optimizer.zero_grad()
                else:
                    optimizer.zero_grad()
                    optimizer.step()
        print("epoch", epoch, "loss", loss.item() * ACCUM)
