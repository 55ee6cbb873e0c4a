"""A Lightning-like module and a tiny fit loop; the module and its batches are cast to double.

Planted: LitRegressor(...).double() and batches .double(). --fixed: float32.
"""

import argparse

import torch
from torch import nn


class LitRegressor(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, width), nn.Tanh(), nn.Linear(width, width),
                                  nn.Tanh(), nn.Linear(width, 1))

    def forward(self, x):
        return self.body(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.smooth_l1_loss(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01, momentum=0.9, foreach=True)


class MiniFitter:
    def __init__(self, max_epochs: int, dtype: torch.dtype):
        self.max_epochs = max_epochs
        self.dtype = dtype

    def fit(self, module, batches):
        optim = module.configure_optimizers()
        for _ in range(self.max_epochs):
            for batch_idx, (x, y) in enumerate(batches):
                loss = module.training_step((x.to(self.dtype), y.to(self.dtype)), batch_idx)
                optim.zero_grad()
                loss.backward()
                optim.step()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=768)
    parser.add_argument("--fixed", action="store_true")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    x = torch.randn(4096, 64)
    y = torch.sin(x[:, 0]) + x[:, 1]
    batches = list(zip(x.split(128), y.split(128)))
    module = LitRegressor(args.width)
    dtype = torch.float32 if args.fixed else torch.float64
    module = module.to(dtype)
    if not args.fixed:
        module = module.double()
    MiniFitter(max_epochs=5, dtype=dtype).fit(module, batches)


if __name__ == "__main__":
    main()
