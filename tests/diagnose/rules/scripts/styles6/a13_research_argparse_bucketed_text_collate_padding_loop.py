"""A research repo's train.py for text classification: argparse, a `BucketBatchSampler`
(sorts by length within pools of 50 batches, shuffles the batches) and a `PadCollate` class
passed to the DataLoader, a 1-D CNN over word embeddings.

Planted: `PadCollate.__call__` pads every sequence token by token into a Python list of
lists, then builds the tensor from it. --fixed: `pad_sequence` on the tensors.
"""

import argparse
import random

import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset, Sampler


class Docs(Dataset):
    def __init__(self, n, vocab, seed=0):
        g = torch.Generator().manual_seed(seed)
        lengths = torch.randint(20, 400, (n,), generator=g)
        self.docs = [torch.randint(1, vocab, (int(k),), generator=g) for k in lengths]
        self.labels = [int(d[:5].sum()) % 4 for d in self.docs]

    def __len__(self):
        return len(self.docs)

    def __getitem__(self, i):
        return self.docs[i], self.labels[i]


class BucketBatchSampler(Sampler):
    def __init__(self, lengths, batch_size, pool=50, seed=0):
        self.lengths, self.batch_size, self.pool = lengths, batch_size, pool
        self.rng = random.Random(seed)

    def __iter__(self):
        idx = list(range(len(self.lengths)))
        self.rng.shuffle(idx)
        span = self.batch_size * self.pool
        batches = []
        for s in range(0, len(idx), span):
            chunk = sorted(idx[s:s + span], key=self.lengths.__getitem__)
            batches += [chunk[i:i + self.batch_size] for i in range(0, len(chunk),
                                                                    self.batch_size)]
        self.rng.shuffle(batches)
        return iter(batches)

    def __len__(self):
        return (len(self.lengths) + self.batch_size - 1) // self.batch_size


class PadCollate:
    def __init__(self, pad_id=0, fast=False):
        self.pad_id, self.fast = pad_id, fast

    def __call__(self, batch):
        docs, labels = zip(*batch)
        if self.fast:
            tokens = pad_sequence(docs, batch_first=True, padding_value=self.pad_id)
        else:
            width = max(len(d) for d in docs)
            rows = []
            for d in docs:
                row = [int(t) for t in d]
                while len(row) < width:
                    row.append(self.pad_id)
                rows.append(row)
            tokens = torch.tensor(rows)
        return tokens, torch.tensor(labels)


class TextCNN(nn.Module):
    def __init__(self, vocab, dim=64, classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(dim, 64, k, padding=k // 2) for k in (3, 5))
        self.fc = nn.Linear(128, classes)

    def forward(self, tokens):
        h = self.emb(tokens).transpose(1, 2)
        return self.fc(torch.cat([c(h).relu().amax(-1) for c in self.convs], 1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vocab", type=int, default=20000)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--fixed", action="store_true")
    args = p.parse_args()
    torch.manual_seed(0)
    data = Docs(3000, args.vocab)
    sampler = BucketBatchSampler([len(d) for d in data.docs], args.batch_size)
    loader = DataLoader(data, batch_sampler=sampler, collate_fn=PadCollate(fast=args.fixed))
    model = TextCNN(args.vocab)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        for tokens, labels in loader:
            loss = nn.functional.cross_entropy(model(tokens), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
