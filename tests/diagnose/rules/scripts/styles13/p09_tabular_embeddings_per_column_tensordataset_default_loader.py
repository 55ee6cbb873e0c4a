"""A tabular model with one embedding table per categorical column (a `ModuleDict` keyed by the
column name) plus numeric features, the columns kept as named tensors and wrapped in a
`TensorDataset` for a default `DataLoader`.

Planted: `DataLoader(TensorDataset(*columns), batch_size=512, shuffle=True)` fetches the
in-memory rows one sample at a time (512 `__getitem__` calls and a collate of 512 tuples of
9 tensors per step). --fixed: the batch is sliced from the tensors with a permutation.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv
CARDS = {"country": 50, "device": 8, "plan": 5, "channel": 12, "weekday": 7, "hour": 24}


class EmbeddingTabular(nn.Module):
    def __init__(self, numeric=3):
        super().__init__()
        self.embs = nn.ModuleDict({c: nn.Embedding(n, 8) for c, n in CARDS.items()})
        self.mlp = nn.Sequential(
            nn.Linear(8 * len(CARDS) + numeric, 64), nn.ReLU(), nn.Linear(64, 1)
        )

    def forward(self, cats, nums):
        parts = [self.embs[c](col) for c, col in zip(CARDS, cats)]
        return self.mlp(torch.cat(parts + [nums], 1)).squeeze(1)


if __name__ == "__main__":
    torch.manual_seed(0)
    n = 30000
    cats = [torch.randint(0, card, (n,)) for card in CARDS.values()]
    nums = torch.randn(n, 3)
    target = ((cats[0] % 3 == 0) ^ (nums[:, 0] > 0)).float()
    data = TensorDataset(*cats, nums, target)
    loader = DataLoader(data, batch_size=512, shuffle=True)
    model = EmbeddingTabular()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(2):
        batches = (
            ([t[i] for t in data.tensors] for i in torch.randperm(n).split(512))
            if FIXED
            else loader
        )
        for *c, x, y in batches:
            loss = nn.functional.binary_cross_entropy_with_logits(model(c, x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
