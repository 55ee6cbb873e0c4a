"""Mixed train/validate/test in one function with a `mode` argument (`def epoch(model, data,
mode, optimizer=None)`); a Transformer-encoder sequence tagger with dropout, validated each epoch,
tested at the end.

Planted: the module mode is set by `model.train(mode != "test")`, so validation runs with dropout
active (the author only thought of the final test as "evaluation"). --fixed:
`model.train(mode == "train")`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
VOCAB, TAGS, SEQ, DIM = 300, 6, 24, 64


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        layer = nn.TransformerEncoderLayer(DIM, 4, 128, dropout=0.3, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.out = nn.Linear(DIM, TAGS)

    def forward(self, x):
        return self.out(self.enc(self.emb(x)))


def epoch(model, data, mode, optimizer=None):
    model.train(mode == "train" if FIXED else mode != "test")
    total, n = 0.0, 0
    with torch.set_grad_enabled(mode == "train"):
        for x, y in data:
            loss = nn.functional.cross_entropy(model(x).reshape(-1, TAGS), y.reshape(-1))
            if mode == "train":
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total, n = total + float(loss), n + 1
    return total / n


def split(n, g):
    x = torch.randint(0, VOCAB, (n, SEQ), generator=g)
    return list(zip(x.split(32), (x % TAGS).split(32)))


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    train, val, test = split(3200, g), split(1600, g), split(800, g)
    model = Tagger()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for e in range(3):
        print(e, epoch(model, train, "train", optimizer), epoch(model, val, "val"))
    print("test", epoch(model, test, "test"))
