"""Length bucketing for a text classifier: a custom `BucketBatchSampler` sorts sequences into
buckets by length and yields batches from one bucket at a time (little padding); a collate pads
to the batch's longest sequence. A GRU over generated token sequences, one DataLoader worker.

Planted: the sampler computes the per-bucket batch size as `batch_size // num_buckets`
("so a full round over the buckets is one batch"): with batch_size 64 and 32 buckets every batch
holds 2 sequences, and each one crosses from the worker process on its own.
--fixed: each bucket yields batches of `batch_size`.
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Sampler

FIXED = "--fixed" in sys.argv


class Texts(Dataset):
    def __init__(self, n):
        rng = random.Random(0)
        self.items = []
        for _ in range(n):
            length = rng.randint(8, 72)
            toks = torch.randint(1, 2000, (length,))
            self.items.append((toks, int(toks[0]) % 2))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class BucketBatchSampler(Sampler):
    def __init__(self, lengths, batch_size, num_buckets):
        order = sorted(range(len(lengths)), key=lengths.__getitem__)
        size = len(order) // num_buckets
        self.buckets = [order[i * size:(i + 1) * size] for i in range(num_buckets)]
        self.per_batch = batch_size if FIXED else max(1, batch_size // num_buckets)

    def __iter__(self):
        batches = []
        for bucket in self.buckets:
            b = bucket[:]
            random.shuffle(b)
            batches += [b[i:i + self.per_batch] for i in range(0, len(b), self.per_batch)]
        random.shuffle(batches)
        return iter(batches)

    def __len__(self):
        return sum((len(b) + self.per_batch - 1) // self.per_batch for b in self.buckets)


def pad(batch):
    toks = nn.utils.rnn.pad_sequence([t for t, _ in batch], batch_first=True)
    return toks, torch.tensor([label for _, label in batch])


class GRUClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(2000, 64)
        self.gru = nn.GRU(64, 64, batch_first=True)
        self.out = nn.Linear(64, 2)

    def forward(self, toks):
        _, h = self.gru(self.emb(toks))
        return self.out(h[-1])


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    data = Texts(4000)
    sampler = BucketBatchSampler([len(t) for t, _ in data.items], 64, 32)
    loader = DataLoader(data, batch_sampler=sampler, collate_fn=pad, num_workers=1,
                        persistent_workers=True)
    model = GRUClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for toks, labels in loader:
            loss = nn.functional.cross_entropy(model(toks), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
