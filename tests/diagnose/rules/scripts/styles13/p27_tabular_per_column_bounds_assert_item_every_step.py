"""A tabular model with one embedding per categorical column that validates its input on every
forward: each categorical column's largest index must be below that column's cardinality (an
`assert` with a readable message, kept from debugging an index error).

Planted: the check reads `col.max().item()` for each of the 8 columns in every forward:
8 host reads of a device value per step (a synchronisation each on a GPU). --fixed: the
columns are checked once, on the whole table, before training.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
CARDS = [30, 12, 7, 24, 5, 100, 9, 16]


class ColumnEmbeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(c, 6) for c in CARDS)
        self.mlp = nn.Sequential(nn.Linear(6 * len(CARDS), 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, cats):
        if not FIXED:
            for k, card in enumerate(CARDS):
                top = cats[:, k].max().item()
                assert top < card, f"column {k}: index {top} >= cardinality {card}"
        return self.mlp(torch.cat([e(cats[:, k]) for k, e in enumerate(self.embs)], 1)).squeeze(1)


if __name__ == "__main__":
    torch.manual_seed(0)
    cats = torch.stack([torch.randint(0, c, (20000,)) for c in CARDS], 1)
    y = ((cats[:, 0] + cats[:, 3]) % 2).float()
    if FIXED:
        assert all(int(cats[:, k].max()) < c for k, c in enumerate(CARDS))
    model = ColumnEmbeddings()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(3):
        for idx in torch.randperm(len(cats)).split(256):
            loss = nn.functional.binary_cross_entropy_with_logits(model(cats[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
