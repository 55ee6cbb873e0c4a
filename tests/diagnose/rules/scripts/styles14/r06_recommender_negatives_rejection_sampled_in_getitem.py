"""A two-tower recommender trained with sampled negatives: each training example is a (user,
positive item) pair and the dataset draws negative items for it.

Planted: `__getitem__` draws 64 negatives by rejection sampling in Python (one `random.randrange`
at a time, checked against the user's seen-item set): Python work per negative per sample, in
the main process.
--fixed: the negatives are drawn for the whole batch in the step with one `torch.randint` (a
seen item drawn now and then is tolerated, as in most recommenders).
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
USERS, ITEMS, NEG = 2000, 20000, 64


class Interactions(Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.pairs = torch.stack(
            [
                torch.randint(0, USERS, (40000,), generator=g),
                torch.randint(0, ITEMS, (40000,), generator=g),
            ],
            1,
        )
        self.seen = {}
        for u, i in self.pairs.tolist():
            self.seen.setdefault(u, set()).add(i)
        self.rng = random.Random(0)

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, k):
        user, pos = self.pairs[k].tolist()
        if FIXED:
            return user, pos
        negs = []
        while len(negs) < NEG:
            j = self.rng.randrange(ITEMS)
            if j not in self.seen[user] and j not in negs:
                negs.append(j)
        return user, pos, torch.tensor(negs)


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.users = nn.Embedding(USERS, 64)
        self.items = nn.Embedding(ITEMS, 64)

    def forward(self, user, pos, negs):
        u = self.users(user)
        scores = torch.cat(
            [
                (u * self.items(pos)).sum(-1, keepdim=True),
                torch.einsum("bd,bkd->bk", u, self.items(negs)),
            ],
            1,
        )
        return nn.functional.cross_entropy(scores, torch.zeros(len(u), dtype=torch.long))


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(Interactions(), batch_size=256, shuffle=True)
    model = TwoTower()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for batch in loader:
            if FIXED:
                user, pos = batch
                negs = torch.randint(0, ITEMS, (len(user), NEG))
            else:
                user, pos, negs = batch
            loss = model(user, pos, negs)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
