"""An IterableDataset streams text-like records from a generator and tokenizes each one in
Python inside `__iter__` (character hashing, padding) in the training process: the loader has
no workers, so every step waits for the batch to be built.

Planted: data built in the main process, slow per-sample Python (num_workers=0). --fixed: the
records are tokenized once up front and batches are sliced from a tensor.
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset

VOCAB, LENGTH = 2048, 96


def records(n, seed=0):
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz "
    for _ in range(n):
        text = "".join(rng.choice(letters) for _ in range(rng.randint(200, 400)))
        yield text, rng.randint(0, 1)


def tokenize(text):
    words = text.split()
    ids = [sum(ord(c) * 31 ** k for k, c in enumerate(w)) % VOCAB for w in words][:LENGTH]
    return ids + [0] * (LENGTH - len(ids))


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        for text, label in records(self.n):
            yield torch.tensor(tokenize(text)), label


class BagModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.EmbeddingBag(VOCAB, 64)
        self.head = nn.Linear(64, 2)

    def forward(self, ids):
        return self.head(self.emb(ids))


def main():
    torch.manual_seed(0)
    model = BagModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    if "--fixed" in sys.argv:
        pairs = list(records(2048))
        ids = torch.tensor([tokenize(t) for t, _ in pairs])
        labels = torch.tensor([label for _, label in pairs])
        loader = list(zip(ids.split(64), labels.split(64)))
    else:
        loader = DataLoader(Stream(2048), batch_size=64)
    for epoch in range(4):
        for ids, labels in loader:
            loss = nn.functional.cross_entropy(model(ids), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
