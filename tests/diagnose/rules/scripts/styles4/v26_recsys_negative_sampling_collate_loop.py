"""A two-tower recommender trained with sampled negatives. The collate_fn builds the batch: for
every (user, positive item) pair it draws negatives with `random.randrange` in a Python loop,
re-drawing any that the user has seen, and assembles nested lists into tensors.

Planted: the batch is assembled sample by sample (and negative by negative) in Python in the
collate_fn. --fixed: negatives drawn for the whole batch with torch.randint (collisions kept, as
most implementations do).
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader

USERS, ITEMS, NEG = 2000, 5000, 20
FIXED = "--fixed" in sys.argv
random.seed(0)
torch.manual_seed(0)
SEEN = {u: set(random.sample(range(ITEMS), 30)) for u in range(USERS)}


def collate_with_negatives(pairs):
    users = torch.tensor([u for u, _ in pairs])
    positives = torch.tensor([i for _, i in pairs])
    if FIXED:
        return users, positives, torch.randint(0, ITEMS, (len(pairs), NEG))
    negatives = []
    for u, _ in pairs:
        row = []
        while len(row) < NEG:
            j = random.randrange(ITEMS)
            if j not in SEEN[u] and j not in row:
                row.append(j)
        negatives.append(row)
    return users, positives, torch.tensor(negatives)


class TwoTower(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.users = nn.Embedding(USERS, dim)
        self.items = nn.Embedding(ITEMS, dim)
        self.user_mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, users, items):
        u = self.user_mlp(self.users(users))
        return (u.unsqueeze(1) * self.items(items)).sum(-1)


def main():
    pairs = [(u, i) for u in range(USERS) for i in list(SEEN[u])[:8]]
    loader = DataLoader(pairs, batch_size=256, shuffle=True, collate_fn=collate_with_negatives)
    model = TwoTower()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for users, pos, neg in loader:
            scores = model(users, torch.cat([pos[:, None], neg], dim=1))
            loss = nn.functional.cross_entropy(scores, torch.zeros(len(users), dtype=torch.long))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
