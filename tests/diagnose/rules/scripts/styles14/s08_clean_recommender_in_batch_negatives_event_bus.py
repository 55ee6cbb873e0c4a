"""Clean: a two-tower recommender with sampled negatives drawn for the whole batch by one
`torch.randint`, progress published on an event bus whose only subscriber prints once per
epoch. `--fixed` changes nothing.
"""

from collections import defaultdict

import torch
from torch import nn

USERS, ITEMS = 5000, 20000


class Bus:
    def __init__(self):
        self.subs = defaultdict(list)

    def subscribe(self, event, fn):
        self.subs[event].append(fn)

    def publish(self, event, **kw):
        for fn in self.subs[event]:
            fn(**kw)


if __name__ == "__main__":
    torch.manual_seed(0)
    users = torch.randint(0, USERS, (60000,))
    items = (users * 7 + torch.randint(0, 50, (60000,))) % ITEMS
    user_emb, item_emb = nn.Embedding(USERS, 64), nn.Embedding(ITEMS, 64)
    opt = torch.optim.Adam([*user_emb.parameters(), *item_emb.parameters()], lr=1e-3)
    bus = Bus()
    bus.subscribe("epoch_end", lambda epoch, loss: print("epoch", epoch, float(loss)))
    for epoch in range(2):
        for idx in torch.randperm(len(users)).split(512):
            u = user_emb(users[idx])
            negs = torch.randint(0, ITEMS, (len(idx), 32))
            scores = torch.cat(
                [
                    (u * item_emb(items[idx])).sum(-1, keepdim=True),
                    torch.einsum("bd,bkd->bk", u, item_emb(negs)),
                ],
                1,
            )
            loss = nn.functional.cross_entropy(scores, torch.zeros(len(idx), dtype=torch.long))
            opt.zero_grad()
            loss.backward()
            opt.step()
        bus.publish("epoch_end", epoch=epoch, loss=loss)
