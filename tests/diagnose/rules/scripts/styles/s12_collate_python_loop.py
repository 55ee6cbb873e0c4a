"""Token sequences padded by a hand-written collate_fn that loops over every token in Python.

Planted: pad_collate() fills the batch element by element. --fixed: torch pad_sequence.
"""

import sys

import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset


class Sentences(Dataset):
    def __init__(self, n, vocab):
        g = torch.Generator().manual_seed(0)
        lengths = torch.randint(16, 64, (n,), generator=g)
        self.items = [torch.randint(1, vocab, (int(k),), generator=g) for k in lengths]
        self.labels = [int(s.sum()) % 2 for s in self.items]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i], self.labels[i]


def pad_collate(batch):
    longest = max(len(seq) for seq, _ in batch)
    out = torch.zeros(len(batch), longest, dtype=torch.long)
    for row, (seq, _) in enumerate(batch):
        for col, token in enumerate(seq.tolist()):
            out[row, col] = token
    return out, torch.tensor([label for _, label in batch])


def fast_collate(batch):
    return (pad_sequence([seq for seq, _ in batch], batch_first=True),
            torch.tensor([label for _, label in batch]))


class Encoder(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.emb = nn.Embedding(vocab, 32, padding_idx=0)
        self.out = nn.Linear(32, 2)

    def forward(self, ids):
        return self.out(self.emb(ids).mean(1))


def main():
    collate = fast_collate if "--fixed" in sys.argv else pad_collate
    torch.manual_seed(0)
    data = Sentences(1024, 1000)
    loader = DataLoader(data, batch_size=32, shuffle=True, collate_fn=collate)
    enc = Encoder(1000)
    opt = torch.optim.Adam(enc.parameters(), lr=1e-3, foreach=True)
    for _ in range(3):
        for ids, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(enc(ids), y).backward()
            opt.step()


if __name__ == "__main__":
    main()
