"""Sequence packing for a small causal LM: variable-length documents are packed into fixed
rows of 128 tokens by the collate_fn, which copies them token by token into the packed row and
writes the position ids and document boundaries as it goes.

Planted: a Python loop over every token of the batch in collate_fn (training process).
--fixed: documents concatenated with torch.cat and cut into rows with view.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
ROW, VOCAB = 128, 500


class Documents(Dataset):
    def __init__(self, n=3000):
        g = torch.Generator().manual_seed(0)
        self.docs = [torch.randint(1, VOCAB, (int(l),), generator=g)
                     for l in torch.randint(20, 200, (n,), generator=g)]

    def __len__(self):
        return len(self.docs)

    def __getitem__(self, i):
        return self.docs[i]


def pack(docs):
    if FIXED:
        flat = torch.cat(docs)
        rows = len(flat) // ROW
        tokens = flat[: rows * ROW].view(rows, ROW)
        positions = torch.cat([torch.arange(len(d)) for d in docs])[: rows * ROW].view(rows, ROW)
        return tokens, positions
    rows, positions, row, pos = [], [], [], []
    for doc in docs:
        for p, tok in enumerate(doc.tolist()):
            row.append(tok)
            pos.append(p)
            if len(row) == ROW:
                rows.append(row)
                positions.append(pos)
                row, pos = [], []
    return torch.tensor(rows), torch.tensor(positions)


class PackedLM(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, dim), nn.Embedding(256, dim)
        self.mix = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.out = nn.Linear(dim, VOCAB)

    def forward(self, tokens, positions):
        h = self.tok(tokens) + self.pos(positions)
        return self.out(h + self.mix(h))


def main():
    torch.manual_seed(0)
    loader = DataLoader(Documents(), batch_size=32, shuffle=True, collate_fn=pack)
    model = PackedLM()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for tokens, positions in loader:
            logits = model(tokens[:, :-1], positions[:, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB),
                                               tokens[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
