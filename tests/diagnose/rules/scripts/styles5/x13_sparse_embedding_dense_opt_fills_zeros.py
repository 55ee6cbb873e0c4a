"""A click-through model with a sparse embedding table (nn.Embedding(sparse=True), SparseAdam)
and a dense interaction MLP trained by Adam. The author clears the dense optimizer with
`zero_grad(set_to_none=False)` ("keep the grad buffers allocated, it is faster" from an old
forum answer), on a deep, wide MLP (2.4M dense parameters).

Planted: every dense gradient is filled with zeros each step, then added to. --fixed:
zero_grad() (gradients set to None).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
FIELDS, VOCAB, DIM = 8, 50000, 16


class CTRModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(VOCAB, DIM, sparse=True)
        layers, width = [], FIELDS * DIM
        for _ in range(10):
            layers += [nn.Linear(width, 512), nn.ReLU()]
            width = 512
        self.mlp = nn.Sequential(*layers, nn.Linear(512, 1))

    def forward(self, ids):
        return self.mlp(self.table(ids).flatten(1)).squeeze(-1)


def main():
    torch.manual_seed(0)
    model = CTRModel()
    sparse_opt = torch.optim.SparseAdam(list(model.table.parameters()), lr=1e-3)
    dense_opt = torch.optim.Adam(model.mlp.parameters(), lr=1e-3)
    ids = torch.randint(0, VOCAB, (16384, FIELDS))
    clicks = (ids[:, 0] % 7 == 0).float()
    for epoch in range(2):
        for idx in torch.randperm(len(ids)).split(32):
            logit = model(ids[idx])
            loss = nn.functional.binary_cross_entropy_with_logits(logit, clicks[idx])
            sparse_opt.zero_grad()
            dense_opt.zero_grad(set_to_none=FIXED)
            loss.backward()
            sparse_opt.step()
            dense_opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
