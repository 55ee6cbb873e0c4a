"""A recommender (user and item embeddings, dot product + bias) trained by a `while True` loop
over a global step, batches pulled with `next()` and the epoch counter advanced on
`StopIteration`; interactions held as tensors in a `TensorDataset`.

Planted: the DataLoader over the in-memory TensorDataset uses four worker processes
(`num_workers=4` copied from an image pipeline), so each batch of index lookups is built in a
worker and handed over through shared memory. --fixed: no workers.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv
USERS, ITEMS, DIM = 2000, 3000, 32


class MF(nn.Module):
    def __init__(self):
        super().__init__()
        self.u, self.i = nn.Embedding(USERS, DIM), nn.Embedding(ITEMS, DIM)
        self.ub, self.ib = nn.Embedding(USERS, 1), nn.Embedding(ITEMS, 1)

    def forward(self, users, items):
        dot = (self.u(users) * self.i(items)).sum(1)
        return dot + self.ub(users).squeeze(1) + self.ib(items).squeeze(1)


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    users = torch.randint(0, USERS, (60000,), generator=g)
    items = torch.randint(0, ITEMS, (60000,), generator=g)
    ratings = ((users % 7 + items % 5) / 10.0).float()
    loader = DataLoader(TensorDataset(users, items, ratings), batch_size=512, shuffle=True,
                        num_workers=0 if FIXED else 4)
    model = MF()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    step, epoch, it = 0, 0, iter(loader)
    while True:
        try:
            u, i, r = next(it)
        except StopIteration:
            epoch += 1
            print("epoch", epoch, "loss", round(loss.item(), 4))
            if epoch == 3:
                break
            it = iter(loader)
            continue
        loss = nn.functional.mse_loss(model(u, i), r)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
