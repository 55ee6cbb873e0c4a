"""A two-tower recommender: user and item embedding tables (the item table is large: 400k items)
with in-batch negatives and a sampled softmax; user features from a small MLP. Trained with Adam
on implicit-feedback pairs generated in memory.

Planted: dense Adam over the 400k-row item table keeps two moments of the whole table (twice the
parameters) although each batch touches a few hundred rows; the optimizer state is the largest
thing the step holds. --fixed: `nn.Embedding(sparse=True)` tables updated by plain SGD (no
state), Adam for the small dense tower.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
USERS, ITEMS, DIM = 5000, 400_000, 32

if __name__ == "__main__":
    torch.manual_seed(0)
    users = nn.Embedding(USERS, DIM, sparse=FIXED)
    items = nn.Embedding(ITEMS, DIM, sparse=FIXED)
    tower = nn.Sequential(nn.Linear(DIM + 8, 64), nn.ReLU(), nn.Linear(64, DIM))
    if FIXED:
        opts = [
            torch.optim.SGD([*users.parameters(), *items.parameters()], lr=0.5),
            torch.optim.Adam(tower.parameters(), lr=1e-3),
        ]
    else:
        opts = [
            torch.optim.Adam(
                [*users.parameters(), *items.parameters(), *tower.parameters()], lr=1e-3
            )
        ]
    user_feats = torch.randn(USERS, 8)
    pair_users = torch.randint(0, USERS, (60000,))
    pair_items = (pair_users * 37 + torch.randint(0, 50, (60000,))) % ITEMS
    for epoch in range(1):
        for idx in torch.randperm(len(pair_users)).split(256):
            u, i = pair_users[idx], pair_items[idx]
            q = tower(torch.cat([users(u), user_feats[u]], 1))
            scores = q @ items(i).T
            loss = nn.functional.cross_entropy(scores, torch.arange(len(u)))
            for opt in opts:
                opt.zero_grad()
            loss.backward()
            for opt in opts:
                opt.step()
        print("epoch", epoch, loss.item())
