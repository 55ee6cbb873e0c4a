"""A Lightning-Fabric-like wrapper written by the author: `fabric = Fabric(precision=...)`,
`model, opt = fabric.setup(model, opt)`, `loader = fabric.setup_dataloaders(loader)` (which
casts each batch to the chosen precision) and `fabric.backward(loss)`. A small 1-D CNN on
generated waveforms.

Planted: the launcher's `precision="64-true"` (left from a numerical gradient check): `setup`
casts the model to float64 and every batch is cast to float64, so all compute runs in double
precision. --fixed: `precision="32-true"`.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv

DTYPES = {"64-true": torch.float64, "32-true": torch.float32, "bf16-true": torch.bfloat16}


class Fabric:
    def __init__(self, precision="32-true"):
        self.dtype = DTYPES[precision]

    def setup(self, model, optimizer):
        model.to(self.dtype)
        return model, optimizer

    def setup_dataloaders(self, loader):
        dtype = self.dtype

        class Cast:
            def __iter__(self):
                for x, y in loader:
                    yield x.to(dtype), y

            def __len__(self):
                return len(loader)

        return Cast()

    def backward(self, loss):
        loss.backward()

    def print(self, *args):
        print(*args)


if __name__ == "__main__":
    torch.manual_seed(0)
    fabric = Fabric(precision="32-true" if FIXED else "64-true")
    waves = torch.randn(4096, 1, 512)
    labels = (waves[:, 0, :64].mean(1) > 0).long()
    model = nn.Sequential(nn.Conv1d(1, 32, 9, padding=4), nn.ReLU(), nn.MaxPool1d(4),
                          nn.Conv1d(32, 64, 9, padding=4), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
                          nn.Flatten(), nn.Linear(64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model, opt = fabric.setup(model, opt)
    loader = fabric.setup_dataloaders(DataLoader(TensorDataset(waves, labels), batch_size=64,
                                                 shuffle=True))
    for epoch in range(3):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            fabric.backward(loss)
            opt.step()
        fabric.print("epoch", epoch, loss.item())
