"""Text classification with variable-length sequences: a vocabulary built from synthetic
"sentences", token ids kept as NumPy arrays, a `collate_fn` that pads to the longest sequence in
the batch and sorts by length, and an LSTM over `pack_padded_sequence`.

Planted: the collate function pads each NumPy array and builds the batch with
`torch.tensor(padded_rows)` from a list of NumPy arrays (the slow element-by-element path).
--fixed: `torch.from_numpy(np.stack(padded_rows))`.
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
VOCAB, PAD = 2000, 0


class Sentences(Dataset):
    def __init__(self, n=3000, seed=0):
        rng = np.random.default_rng(seed)
        self.ids = [
            rng.integers(1, VOCAB, rng.integers(20, 120)).astype(np.int64) for _ in range(n)
        ]
        self.labels = [int(ids[:5].sum() % 2) for ids in self.ids]

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return self.ids[i], self.labels[i]


def pad_collate(batch):
    batch = sorted(batch, key=lambda item: len(item[0]), reverse=True)
    lengths = [len(ids) for ids, _ in batch]
    longest = lengths[0]
    padded_rows = [np.pad(ids, (0, longest - len(ids)), constant_values=PAD) for ids, _ in batch]
    if FIXED:
        tokens = torch.from_numpy(np.stack(padded_rows))
    else:
        tokens = torch.tensor(padded_rows)
    return tokens, torch.tensor(lengths), torch.tensor([label for _, label in batch])


class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32, padding_idx=PAD)
        self.lstm = nn.LSTM(32, 32, batch_first=True)
        self.out = nn.Linear(32, 2)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True)
        _, (h, _) = self.lstm(packed)
        return self.out(h[-1])


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(Sentences(), batch_size=128, shuffle=True, collate_fn=pad_collate)
    model = LSTMClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(2):
        for tokens, lengths, labels in loader:
            loss = nn.functional.cross_entropy(model(tokens, lengths), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
