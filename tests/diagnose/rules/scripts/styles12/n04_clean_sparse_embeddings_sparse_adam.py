"""A clean control: a factorization-machine-like recommender with a large `nn.Embedding(...,
sparse=True)` table updated by `torch.optim.SparseAdam` and a dense head updated by Adam, two
optimizers both zeroed and stepped every batch of 512 interactions. Nothing is planted;
`--fixed` runs the same program.
"""

import torch
from torch import nn


class FM(nn.Module):
    def __init__(self, users=50000, items=20000, dim=32):
        super().__init__()
        self.emb = nn.Embedding(users + items, dim, sparse=True)
        self.users = users
        self.head = nn.Sequential(nn.Linear(2 * dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, u, i):
        eu, ei = self.emb(u), self.emb(i + self.users)
        return (eu * ei).sum(1) + self.head(torch.cat([eu, ei], 1)).squeeze(1)


if __name__ == "__main__":
    torch.manual_seed(0)
    n = 60000
    u, i = torch.randint(0, 50000, (n,)), torch.randint(0, 20000, (n,))
    r = ((u % 7 + i % 5) > 5).float()
    model = FM()
    sparse_opt = torch.optim.SparseAdam(list(model.emb.parameters()), lr=1e-2)
    dense_opt = torch.optim.Adam(model.head.parameters(), lr=1e-3)
    for epoch in range(2):
        for idx in torch.randperm(n).split(512):
            loss = nn.functional.binary_cross_entropy_with_logits(model(u[idx], i[idx]), r[idx])
            sparse_opt.zero_grad()
            dense_opt.zero_grad()
            loss.backward()
            sparse_opt.step()
            dense_opt.step()
        print("epoch", epoch, float(loss))
