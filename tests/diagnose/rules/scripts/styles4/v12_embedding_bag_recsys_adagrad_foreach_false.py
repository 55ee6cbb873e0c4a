"""A DLRM-like recommender: one nn.EmbeddingBag per sparse feature (26 tables, mean-pooled
multi-hot ids), a bottom MLP for the dense features, pairwise dot interactions and a top MLP.
The optimizer is Adagrad, built with foreach=False ("deterministic across versions", says the
author's comment).

Planted: the optimizer step runs tensor by tensor over ~60 parameter tensors. --fixed: Adagrad
with foreach=True (on CPU tensors PyTorch's default is the per-tensor loop too).
"""

import sys

import torch
from torch import nn

N_SPARSE, VOCAB, DIM, HOT = 26, 1000, 16, 3


class DLRM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tables = nn.ModuleList(nn.EmbeddingBag(VOCAB, DIM, mode="mean")
                                    for _ in range(N_SPARSE))
        self.bottom = nn.Sequential(nn.Linear(13, 64), nn.ReLU(), nn.Linear(64, DIM), nn.ReLU())
        n = N_SPARSE + 1
        self.top = nn.Sequential(nn.Linear(n * (n - 1) // 2 + DIM, 128), nn.ReLU(),
                                 nn.Linear(128, 1))

    def forward(self, dense, sparse):
        feats = [self.bottom(dense)] + [t(sparse[:, i]) for i, t in enumerate(self.tables)]
        stacked = torch.stack(feats, dim=1)
        inter = stacked @ stacked.transpose(1, 2)
        i, j = torch.triu_indices(len(feats), len(feats), offset=1)
        return self.top(torch.cat([feats[0], inter[:, i, j]], dim=1)).squeeze(1)


def main():
    torch.manual_seed(0)
    model = DLRM()
    if "--fixed" in sys.argv:
        opt = torch.optim.Adagrad(model.parameters(), lr=0.02, foreach=True)
    else:
        # deterministic across versions
        opt = torch.optim.Adagrad(model.parameters(), lr=0.02, foreach=False)
    loss_fn = nn.BCEWithLogitsLoss()
    for step in range(800):
        dense = torch.randn(64, 13)
        sparse = torch.randint(0, VOCAB, (64, N_SPARSE, HOT))
        clicks = (dense[:, 0] + 0.1 * torch.randn(64) > 0).float()
        loss = loss_fn(model(dense, sparse), clicks)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 200 == 0:
            print(step, f"{loss.item():.4f}")


if __name__ == "__main__":
    main()
