"""An experiment described by a `@dataclass` whose `__post_init__` builds the model, the
optimizer and the data from its fields (no separate build step). A tabular regressor.

Planted: the config's `dtype: str = "float64"` (kept from a numerical check) is applied in
`__post_init__` with `getattr(torch, self.dtype)`: the model and the data are float64, every
matmul runs at double precision. --fixed: `dtype = "float32"`.
"""

import sys
from dataclasses import dataclass, field

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


@dataclass
class Experiment:
    features: int = 64
    hidden: int = 512
    depth: int = 3
    lr: float = 1e-3
    dtype: str = "float32" if FIXED else "float64"
    model: nn.Module = field(init=False)

    def __post_init__(self):
        kind = getattr(torch, self.dtype)
        layers, width = [], self.features
        for _ in range(self.depth):
            layers += [nn.Linear(width, self.hidden), nn.GELU()]
            width = self.hidden
        self.model = nn.Sequential(*layers, nn.Linear(width, 1)).to(kind)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=self.lr)
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(8192, self.features, generator=g).to(kind)
        self.y = self.x[:, :4].sum(1, keepdim=True).sin()


if __name__ == "__main__":
    torch.manual_seed(0)
    exp = Experiment()
    for epoch in range(3):
        for idx in torch.randperm(len(exp.x)).split(128):
            loss = nn.functional.mse_loss(exp.model(exp.x[idx]), exp.y[idx])
            exp.opt.zero_grad()
            loss.backward()
            exp.opt.step()
        print("epoch", epoch, float(loss))
