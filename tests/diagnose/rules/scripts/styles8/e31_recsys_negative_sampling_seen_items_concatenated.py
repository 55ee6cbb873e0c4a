"""Matrix factorisation with negative sampling for implicit feedback: each step draws candidate
negatives for a batch of (user, item) positives and must not reuse items already trained on as
positives in this epoch, so the script keeps the positives seen so far and filters candidates
with `torch.isin`; a BPR loss.

Planted: the seen positives are kept by `seen = torch.cat([seen, items])` each step and every
step's `torch.isin(candidates, seen)` searches all of them, so each step costs more than the one
before. --fixed: a boolean mask over the item ids, set in place.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
USERS, ITEMS, DIM = 2000, 60000, 32

if __name__ == "__main__":
    torch.manual_seed(0)
    pos_users = torch.randint(0, USERS, (160000,))
    pos_items = (pos_users * 13 + torch.randint(0, 200, (160000,))) % ITEMS
    user_emb, item_emb = nn.Embedding(USERS, DIM), nn.Embedding(ITEMS, DIM)
    opt = torch.optim.Adam([*user_emb.parameters(), *item_emb.parameters()], lr=5e-3)
    for _epoch in range(1):
        seen = torch.empty(0, dtype=torch.long)
        seen_mask = torch.zeros(ITEMS, dtype=torch.bool)
        for step, idx in enumerate(torch.randperm(len(pos_users)).split(256)):
            u, i = pos_users[idx], pos_items[idx]
            candidates = torch.randint(0, ITEMS, (4 * len(u),))
            if FIXED:
                seen_mask[i] = True
                fresh = candidates[~seen_mask[candidates]]
            else:
                seen = torch.cat([seen, i])
                fresh = candidates[~torch.isin(candidates, seen)]
            j = fresh[: len(u)] if len(fresh) >= len(u) else torch.randint(0, ITEMS, (len(u),))
            pu = user_emb(u)
            loss = -nn.functional.logsigmoid(
                (pu * item_emb(i)).sum(1) - (pu * item_emb(j)).sum(1)
            ).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 200 == 0:
                print(step, loss.item())
