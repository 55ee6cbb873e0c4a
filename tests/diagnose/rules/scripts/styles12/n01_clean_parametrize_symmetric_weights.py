"""A clean control: an MLP whose hidden weight is constrained with
`torch.nn.utils.parametrize.register_parametrization` (a symmetric matrix, recomputed from the
raw parameter in every forward), trained with Adam in batches of 256, evaluated once per epoch
under `torch.no_grad()` in eval mode. Nothing is planted; `--fixed` runs the same program.
"""

import torch
from torch import nn
from torch.nn.utils import parametrize


class Symmetric(nn.Module):
    def forward(self, w):
        return w.triu() + w.triu(1).transpose(0, 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(12000, 256)
    y = (x[:, :5].sum(1) > 0).long()
    hidden = nn.Linear(256, 256)
    parametrize.register_parametrization(hidden, "weight", Symmetric())
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), hidden, nn.ReLU(), nn.Linear(256, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        model.train()
        for idx in torch.randperm(10000).split(256):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(x[10000:]).argmax(1) == y[10000:]).float().mean()
        print("epoch", epoch, float(loss), float(acc))
