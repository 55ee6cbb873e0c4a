"""A Lightning-free "LightningModule look-alike": the model defines `training_step`,
`validation_step` and `configure_optimizers`, and a tiny trainer of our own drives them. The
hyper-parameters are a `@dataclass(frozen=True)` whose `precision` field is a string.

Planted: `precision="64"` maps to `torch.float64` and the module is cast to it in `setup()`:
every matmul of the step runs in double precision.
--fixed: `precision="32"`.
"""

import sys
from dataclasses import dataclass

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
DTYPES = {"64": torch.float64, "32": torch.float32, "bf16": torch.bfloat16}


@dataclass(frozen=True)
class HParams:
    width: int = 768
    lr: float = 1e-3
    batch_size: int = 128
    precision: str = "32" if FIXED else "64"


class Regressor(nn.Module):
    def __init__(self, hp: HParams):
        super().__init__()
        self.hp = hp
        self.net = nn.Sequential(
            nn.Linear(256, hp.width),
            nn.GELU(),
            nn.Linear(hp.width, hp.width),
            nn.GELU(),
            nn.Linear(hp.width, 1),
        )

    def setup(self):
        self.to(DTYPES[self.hp.precision])

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    @torch.no_grad()
    def validation_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hp.lr)


class TinyTrainer:
    def __init__(self, max_epochs):
        self.max_epochs = max_epochs

    def batches(self, x, y, size, dtype):
        for idx in torch.randperm(len(x)).split(size):
            yield x[idx].to(dtype), y[idx].to(dtype)

    def fit(self, module, train, val):
        module.setup()
        opt = module.configure_optimizers()
        dtype = next(module.parameters()).dtype
        for epoch in range(self.max_epochs):
            module.train()
            for i, batch in enumerate(self.batches(*train, module.hp.batch_size, dtype)):
                loss = module.training_step(batch, i)
                opt.zero_grad()
                loss.backward()
                opt.step()
            module.eval()
            val_loss = sum(
                float(module.validation_step(b, i))
                for i, b in enumerate(self.batches(*val, 512, dtype))
            )
            print("epoch", epoch, float(loss), val_loss)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6144, 256)
    y = x[:, :8].sum(1, keepdim=True)
    TinyTrainer(max_epochs=3).fit(Regressor(HParams()), (x[:5120], y[:5120]), (x[5120:], y[5120:]))
