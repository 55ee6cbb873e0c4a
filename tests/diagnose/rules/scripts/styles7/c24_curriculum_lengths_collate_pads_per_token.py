"""Curriculum by length: each epoch allows longer token sequences (`max_len` grows 16 -> 64);
sequences of varying length are padded by a custom `collate_fn`; a bag-of-embeddings + GRU
classifier.

Planted: the collate function pads token by token in nested Python loops (`for row ... for pos
...: batch[row, pos] = tok`). --fixed: `nn.utils.rnn.pad_sequence` on the list of tensors.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
VOCAB = 400


class Sentences(Dataset):
    def __init__(self, n, max_len, g):
        lengths = torch.randint(4, max_len + 1, (n,), generator=g)
        self.seqs = [torch.randint(1, VOCAB, (int(k),), generator=g) for k in lengths]
        self.labels = [int(s[0] % 2) for s in self.seqs]

    def __len__(self):
        return len(self.seqs)

    def __getitem__(self, i):
        return self.seqs[i], self.labels[i]


def pad_collate(batch):
    seqs, labels = zip(*batch)
    if FIXED:
        padded = nn.utils.rnn.pad_sequence(list(seqs), batch_first=True)
    else:
        width = max(len(s) for s in seqs)
        padded = torch.zeros(len(seqs), width, dtype=torch.long)
        for row, s in enumerate(seqs):
            for pos, tok in enumerate(s.tolist()):
                padded[row, pos] = tok
    return padded, torch.tensor(labels)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 32, padding_idx=0)
        self.gru = nn.GRU(32, 32, batch_first=True)
        self.fc = nn.Linear(32, 2)

    def forward(self, x):
        return self.fc(self.gru(self.emb(x))[1][-1])


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch, max_len in enumerate([16, 32, 48, 64]):
        loader = DataLoader(Sentences(2000, max_len, g), batch_size=64, shuffle=True,
                            collate_fn=pad_collate)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, max_len, loss.item())
