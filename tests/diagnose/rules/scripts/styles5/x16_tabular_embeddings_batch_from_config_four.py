"""A tabular model with categorical embeddings (one nn.Embedding per categorical column,
concatenated with the numeric columns). Hyper-parameters come from a JSON-like dict; the
batch size was copied from a notebook where the author debugged one batch at a time: 4.

Planted: batches of 4 rows (every step is overhead-bound). --fixed: batch size 512.
"""

import sys

import torch
from torch import nn

HPARAMS = {"batch_size": 4, "lr": 1e-3, "epochs": 1, "emb_dim": 8, "hidden": [128, 64]}
if "--fixed" in sys.argv:
    HPARAMS["batch_size"] = 512
CARDINALITIES = [12, 7, 31, 100, 5]
NUMERIC = 10


class TabularNet(nn.Module):
    def __init__(self, hp):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(c, hp["emb_dim"]) for c in CARDINALITIES)
        width = len(CARDINALITIES) * hp["emb_dim"] + NUMERIC
        layers = []
        for h in hp["hidden"]:
            layers += [nn.Linear(width, h), nn.BatchNorm1d(h), nn.ReLU()]
            width = h
        self.mlp = nn.Sequential(*layers, nn.Linear(width, 1))

    def forward(self, cats, nums):
        embedded = [emb(cats[:, i]) for i, emb in enumerate(self.embs)]
        return self.mlp(torch.cat(embedded + [nums], dim=1)).squeeze(-1)


def main():
    torch.manual_seed(0)
    n = 6000
    cats = torch.stack([torch.randint(0, c, (n,)) for c in CARDINALITIES], dim=1)
    nums = torch.randn(n, NUMERIC)
    target = nums[:, 0] + (cats[:, 0] % 3).float()
    model = TabularNet(HPARAMS)
    opt = torch.optim.AdamW(model.parameters(), lr=HPARAMS["lr"])
    bs = HPARAMS["batch_size"]
    for epoch in range(HPARAMS["epochs"]):
        order = torch.randperm(n)
        for start in range(0, n - bs + 1, bs):
            idx = order[start:start + bs]
            loss = nn.functional.mse_loss(model(cats[idx], nums[idx]), target[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
