"""CLEAN: a recommender with sparse nn.EmbeddingBag tables (offsets-style input, sum mode) updated
by SparseAdam (only the rows a batch touches), a dense MLP updated by Adam, BCEWithLogits on
clicks. Nothing is planted (`--fixed` changes nothing).
"""

import torch
from torch import nn

FIELDS, VOCAB, DIM = 8, 20000, 32


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.bags = nn.ModuleList(nn.EmbeddingBag(VOCAB, DIM, mode="sum", sparse=True)
                                  for _ in range(FIELDS))
        self.mlp = nn.Sequential(nn.Linear(FIELDS * DIM, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, ids, offsets):
        pooled = [bag(ids[f], offsets[f]) for f, bag in enumerate(self.bags)]
        return self.mlp(torch.cat(pooled, 1)).squeeze(1)


def main():
    torch.manual_seed(0)
    model = Recommender()
    sparse_opt = torch.optim.SparseAdam(list(model.bags.parameters()), lr=1e-3)
    dense_opt = torch.optim.Adam(model.mlp.parameters(), lr=1e-3)
    for step in range(400):
        lengths = torch.randint(1, 6, (FIELDS, 256))
        offsets = torch.cat([torch.zeros(FIELDS, 1, dtype=torch.long),
                             lengths.cumsum(1)[:, :-1]], 1)
        ids = [torch.randint(0, VOCAB, (int(lengths[f].sum()),)) for f in range(FIELDS)]
        clicks = (lengths[0] > 3).float()
        loss = nn.functional.binary_cross_entropy_with_logits(model(ids, offsets), clicks)
        sparse_opt.zero_grad()
        dense_opt.zero_grad()
        loss.backward()
        sparse_opt.step()
        dense_opt.step()
        if step % 100 == 0:
            print(step, loss.item())


if __name__ == "__main__":
    main()
